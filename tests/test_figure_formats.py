"""The figure formats are one table (plots.formats): the CLI, the dialogs and the writers read it."""

from __future__ import annotations

import pytest

from gradviz.cli import main
from gradviz.plots.formats import FIGURE_FORMATS, dialog_filter, suffixes_in_words


def test_every_format_has_its_writer_and_dialog_filter():
    from gradviz.qt import export_dialogs as ED
    from gradviz.qt.export.files import WRITERS

    assert set(WRITERS) == set(FIGURE_FORMATS)
    assert all(WRITERS[ext].SUFFIX == ext for ext in FIGURE_FORMATS)
    assert ED.IMAGE_FILTERS.split(";;") == [dialog_filter(ext) for ext in FIGURE_FORMATS]
    assert dialog_filter(".svg") == "SVG vector image (*.svg)"


@pytest.mark.parametrize("name", ["figure.bmp", "figure"])
def test_the_command_line_refuses_a_plot_of_no_known_format(name, tmp_path, capsys):
    code = main(["run", str(tmp_path / "none.py"), "--plot", str(tmp_path / name)])
    assert code == 2
    assert f"the file must end in {suffixes_in_words()}" in capsys.readouterr().err
    assert suffixes_in_words() == ".png, .svg or .pdf"
