"""Running a stranger's code: the bubblewrap launcher (``bwrap``) and the notebook runner
that executes inside it (``notebook_runner``). Imports only the vocabulary floor."""
