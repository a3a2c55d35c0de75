"""Files that ship inside the gradviz package as `gradviz.resources` (see setup.py): the
built-in examples and the application icon. Nothing to import here; read them with
`gradviz.bundled`."""
