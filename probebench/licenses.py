"""License identifiers probebench accepts: common SPDX ids, plus ``custom`` and ``closed``."""

from __future__ import annotations

import difflib
from typing import Literal

#: SPDX ids seen on models, data and code; extend when a real entry needs another.
SPDX_IDS = frozenset({
    "0BSD", "AFL-3.0", "AGPL-3.0-only", "AGPL-3.0-or-later", "Apache-2.0", "Artistic-2.0",
    "BSD-2-Clause", "BSD-3-Clause", "BSD-3-Clause-Clear", "BSL-1.0", "CC-BY-2.0", "CC-BY-3.0",
    "CC-BY-4.0", "CC-BY-NC-4.0", "CC-BY-NC-ND-4.0", "CC-BY-NC-SA-4.0", "CC-BY-ND-4.0",
    "CC-BY-SA-3.0", "CC-BY-SA-4.0", "CC0-1.0", "CDLA-Permissive-2.0", "ECL-2.0", "EPL-2.0",
    "EUPL-1.2", "GPL-2.0-only", "GPL-2.0-or-later", "GPL-3.0-only", "GPL-3.0-or-later", "ISC",
    "LGPL-2.1-only", "LGPL-2.1-or-later", "LGPL-3.0-only", "LGPL-3.0-or-later", "MIT",
    "MIT-0", "MPL-2.0", "ODC-By-1.0", "ODbL-1.0", "OFL-1.1", "OpenRAIL", "PDDL-1.0",
    "Unlicense", "UPL-1.0", "WTFPL", "Zlib",
})
NON_SPDX = frozenset({"custom", "closed"})
#: the ids above that the Open Source Initiative approved (data licenses such as CC-BY
#: are not software licenses and are not OSI-approved)
OSI_APPROVED = frozenset({
    "0BSD", "AFL-3.0", "AGPL-3.0-only", "AGPL-3.0-or-later", "Apache-2.0", "Artistic-2.0",
    "BSD-2-Clause", "BSD-3-Clause", "BSL-1.0", "ECL-2.0", "EPL-2.0", "EUPL-1.2",
    "GPL-2.0-only", "GPL-2.0-or-later", "GPL-3.0-only", "GPL-3.0-or-later", "ISC",
    "LGPL-2.1-only", "LGPL-2.1-or-later", "LGPL-3.0-only", "LGPL-3.0-or-later", "MIT",
    "MIT-0", "MPL-2.0", "OFL-1.1", "Unlicense", "UPL-1.0", "Zlib",
})


#: open licenses for data and content (Creative Commons and Open Data Commons without
#: non-commercial or no-derivatives terms, public-domain dedications): accepted like
#: OSI-approved software licenses
OPEN_CONTENT = frozenset({
    "CC-BY-2.0", "CC-BY-3.0", "CC-BY-4.0", "CC-BY-SA-3.0", "CC-BY-SA-4.0", "CC0-1.0",
    "CDLA-Permissive-2.0", "ODC-By-1.0", "ODbL-1.0", "PDDL-1.0", "BSD-3-Clause-Clear",
    "WTFPL",
})
#: licenses that restrict use or derivatives (non-commercial, no-derivatives, use-based
#: restrictions): accepted, shown, and scored below every open license
RESTRICTED = frozenset({"CC-BY-NC-4.0", "CC-BY-NC-ND-4.0", "CC-BY-NC-SA-4.0", "CC-BY-ND-4.0",
                        "OpenRAIL"})

LicenseKind = Literal["osi", "open-content", "restricted", "custom", "closed", "unknown"]


def license_kind(value: str) -> LicenseKind:
    """Which of probebench's license classes ``value`` belongs to (one policy for the
    entry check, the review and ProbeScore's license axis)."""
    if value in OSI_APPROVED:
        return "osi"
    if value in OPEN_CONTENT:
        return "open-content"
    if value in RESTRICTED:
        return "restricted"
    if value == "custom":
        return "custom"
    if value == "closed":
        return "closed"
    return "unknown"


def check_license(value: str) -> str | None:
    """None when ``value`` is accepted, else the reason (with a suggestion)."""
    if value in SPDX_IDS or value in NON_SPDX:
        return None
    known = sorted(SPDX_IDS | NON_SPDX)
    lowered = {k.lower(): k for k in known}
    if value.lower() in lowered:
        return f"license {value!r} is spelled {lowered[value.lower()]!r} in SPDX"
    close = difflib.get_close_matches(value, known, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return (f"license {value!r} is not a known SPDX id nor 'custom' or 'closed'{hint}")
