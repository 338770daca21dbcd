"""Serve the LOE explorer on this machine only:

    panel serve apps/explorer.py --address 127.0.0.1 --warm

then open the printed URL.  ``--warm`` imports everything and compiles the numba
kernels before the first visitor arrives.  Without ``--address`` the server
listens on every network interface; to share the page with a class, name the
address and the host name students type, e.g.
``--address 0.0.0.0 --allow-websocket-origin lecture-pc.example.org:5006``.
With ``LOE_VIZ_MAX_PAGES_PER_ADDRESS=4`` in the environment, one client address
may have at most 4 pages open at once (off by default); a page over the limit
says so and builds no explorer.
"""

import panel as pn

from loe_viz.app import Explorer
from loe_viz.app.serving import admit_page, harden

# refuse websocket clients without an Origin header; warn when listening on every interface
harden()

refused = admit_page()  # None unless LOE_VIZ_MAX_PAGES_PER_ADDRESS is set and this address is at it
if refused is not None:
    refused.servable(title="Landmark Ordinal Embedding: too many pages open")
else:
    pn.extension("katex", "filedropper", throttled=True, notifications=False)
    Explorer().servable()
