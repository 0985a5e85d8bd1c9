"""Running a stranger's code: the bubblewrap launcher (``bwrap``), its system-call filter
(``seccomp``), its limits and how they hold over the whole process tree (``limits``,
``cgroups``, ``watch``), and what runs inside it (``launcher``, which unpacks the submitted
folder's copy, and ``notebook_runner``). Imports only the vocabulary floor."""
