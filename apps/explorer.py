"""Serve the LOE explorer:  panel serve apps/explorer.py  (then open the printed URL).

For a lecture add ``--warm``: the server then imports everything and compiles the
numba kernels before the first visitor arrives.
"""

import panel as pn

from loe_viz.app import Explorer

pn.extension("katex", throttled=True, notifications=False)

Explorer().servable()
