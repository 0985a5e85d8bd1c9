"""What a pull request goes through, in order: ``confine`` (which files it may touch),
``check`` (entries and artifacts), ``proposal`` (task proposals), ``reproduce`` (the
author's notebooks, sandboxed), ``review`` (the reviewer's verdict) and ``comment`` (the
markdown posted back)."""
