"""Qt-free plot data: decimated series, shared histogram bins, heatmaps, and grid figure
descriptions that the window and the exporters draw (see series.py and figure.py)."""
