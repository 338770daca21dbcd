"""Serve the LOE explorer on this machine only:

    panel serve apps/explorer.py --address 127.0.0.1 --warm

then open the printed URL.  ``--warm`` imports everything and compiles the numba
kernels before the first visitor arrives.  Without ``--address`` the server
listens on every network interface; to share the page with a class, name the
address and the host name students type, e.g.
``--address 0.0.0.0 --allow-websocket-origin lecture-pc.example.org:5006``.
"""

import panel as pn

from loe_viz.app import Explorer
from loe_viz.app.serving import harden

# refuse websocket clients without an Origin header; warn when listening on every interface
harden()

pn.extension("katex", "filedropper", throttled=True, notifications=False)

Explorer().servable()
