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

from loe_viz.app.serving import serve_explorer_page

# refuses websocket clients without an Origin header and warns when listening on every interface
serve_explorer_page()
