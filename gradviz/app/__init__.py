"""Qt-free state of a gradviz session: the loaded files and their pairs, results by op, run
progress, and the analysis of a result (verdicts, diagnostics, plot data) that the window and the
command line share. Observers are plain callbacks; nothing here imports Qt or a framework."""
