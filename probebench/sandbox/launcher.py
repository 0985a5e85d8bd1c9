"""Executed *inside* the sandbox, first: unpack the submitted folder's copy into the
sandbox's own ``/scratch`` (a size-capped tmpfs, so its writes count in the memory limit
and never reach a host disk), then become the command.

``python -I launcher.py TAR_FD DEST CWD -- COMMAND...``: reads an uncompressed tar from
file descriptor TAR_FD (made by ``bwrap.run_sandboxed`` from the host's copy; no host path
is ever mounted), unpacks it into DEST with tarfile's ``data`` filter, closes the
descriptor, changes to CWD and executes COMMAND in its own place. Standard library only:
it runs by path, before anything of the submitted folder can be imported.
"""

from __future__ import annotations

import os
import sys
import tarfile

EXIT_UNPACK = 70


def main(argv: list[str]) -> int:
    if len(argv) < 5 or argv[3] != "--":
        print("usage: launcher.py TAR_FD DEST CWD -- COMMAND...", file=sys.stderr)
        return 64
    fd, dest, cwd, command = int(argv[0]), argv[1], argv[2], argv[4:]
    try:
        with os.fdopen(fd, "rb") as fh, tarfile.open(fileobj=fh, mode="r:") as tar:
            if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
                tar.extractall(dest, filter="data")
            else:  # the archive is probebench's own, made from a checked copy
                tar.extractall(dest)
    except (OSError, tarfile.TarError) as exc:
        print(f"probebench sandbox: the submitted folder's copy could not be unpacked into "
              f"{dest} ({exc})", file=sys.stderr)
        return EXIT_UNPACK
    os.chdir(cwd)
    os.execv(command[0], command)
    return 0  # not reached


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
