"""One :class:`panel.viewable.Viewer` per step of the explorer."""

from .base import StepView
from .compare import CompareView
from .configure import ConfigureView
from .edm import EDMView
from .embedding import EmbeddingView
from .ranking import RankingView
from .sample import SampleView
from .shifts import ShiftsView

__all__ = ["StepView", "ConfigureView", "SampleView", "RankingView", "ShiftsView", "EDMView",
           "EmbeddingView", "CompareView", "VIEW_CLASSES"]

#: The views in the order of :data:`loe_viz.app.state.STEPS`.
VIEW_CLASSES = (ConfigureView, SampleView, RankingView, ShiftsView, EDMView, EmbeddingView, CompareView)

# KaTeX's fonts from the package itself (Panel bundles KaTeX without them): formulas render
# in KaTeX's fonts with or without internet.
from .base import use_local_katex_fonts  # noqa: E402

use_local_katex_fonts()
