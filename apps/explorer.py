"""Serve the LOE explorer:  panel serve apps/explorer.py  (then open the printed URL)."""

import panel as pn

from loe_viz.app import Explorer

pn.extension("katex", throttled=True, notifications=False)

Explorer().servable()
