"""The desktop app (PySide6 + pyqtgraph): the only part of gradviz that imports Qt.

Entry point: gradviz.qt.app.main(files, run=False, screenshot=None). The GUI process never imports
torch or tensorflow; every framework call goes through gradviz.engine workers.
"""
