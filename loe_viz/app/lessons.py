"""Curated lessons of the explorer: a preset, a short story, where to look, a question.

Lessons are data (no Panel): each :class:`Lesson` names a configuration of the
walk-through (parameters of the explorer state), the step to look at, and what to
contrast it with; a sweep lesson also configures a :class:`~loe_viz.app.sweep.SweepState`,
and a data lesson opens a bundled triplet file in "Your triplets".  The served
explorer opens a lesson from its URL, ``?lesson=<key>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

__all__ = ["Lesson", "LESSONS", "lesson", "lesson_keys"]


def _frozen(d: dict | None) -> Mapping:
    return MappingProxyType(dict(d or {}))


@dataclass(frozen=True)
class Lesson:
    """One lesson.

    Attributes
    ----------
    key : str
        Short name used in the URL (``?lesson=key``).
    title : str
    narrative : str
        A few sentences (Markdown) telling what the preset shows.
    look_at : str
        Where to look: a step of the walk-through (see ``loe_viz.app.state.STEPS``),
        ``"Sweep"`` or ``"Your triplets"``.
    question : str
        A question for students.
    config : Mapping
        Parameters of the explorer state set when the lesson opens (the rest keep their
        defaults).
    contrast : tuple of (label, Mapping)
        Variants one click away: a button label and the parameters it changes.
    sweep : Mapping or None
        Parameters of a :class:`~loe_viz.app.sweep.SweepState` (a sweep lesson).
    sweep_metrics : tuple of str
        Metrics the sweep plots (fields of :class:`~loe_viz.app.sweep.SweepPoint`).
    sample : str or None
        A bundled triplet file opened in "Your triplets".
    """

    key: str
    title: str
    narrative: str
    look_at: str
    question: str
    config: Mapping = field(default_factory=dict)
    contrast: tuple = ()
    sweep: Mapping | None = None
    sweep_metrics: tuple = ("procrustes", "triplet_error")
    sample: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "config", _frozen(self.config))
        object.__setattr__(self, "contrast", tuple((lab, _frozen(ch)) for lab, ch in self.contrast))
        if self.sweep is not None:
            object.__setattr__(self, "sweep", _frozen(self.sweep))


#: The walk-through's defaults that every lesson starts from (so a lesson does not inherit
#: whatever the previous one or the visitor changed).
BASE = {
    "kind": "gaussian", "n": 1000, "d": 2, "seed": 0, "temperature": 1.0, "budget_unit": "total_c",
    "budget": 100.0, "n_landmarks": None, "landmark_selection": "random", "offset": "lambda2",
    "paper_only": False,
}


LESSONS: tuple[Lesson, ...] = (
    Lesson(
        key="landmarks",
        title="A bad random draw of landmarks against MaxMin",
        narrative=(
            "LOE needs only *d* + 3 = 5 landmarks here, drawn at random.  With this seed, the "
            "random draw puts the five landmarks almost on a line: seen from them the data have "
            "hardly a second dimension (on the EDM step, the second eigenvalue is barely above the "
            "third, which is noise), so where the items lie across that line cannot be recovered.  "
            "The Procrustes error is over ten times that of a typical random draw, and more than "
            "fifty times MaxMin's.  MaxMin chooses landmarks spread out over the data instead."
        ),
        look_at="Embedding",
        question=("Where in the embedding are the errors largest, and how does that relate to where the "
                  "landmarks ★ are?  What does MaxMin change, and at what cost in comparisons?"),
        config={"seed": 10},
        contrast=(("MaxMin landmarks", {"landmark_selection": "maxmin"}),
                  ("Random landmarks (this bad draw)", {"landmark_selection": "random"})),
    ),
    Lesson(
        key="offset",
        title="ℓ = d + 3 landmarks against more: the spectrum and the common offset",
        narrative=(
            "The common offset of the shifts is an eigenvalue of C with multiplicity at least "
            "*ℓ* − *d* − 2: exactly one copy at the minimum *ℓ* = *d* + 3, so LOE's λ₂ is a single "
            "noisy number.  With 12 landmarks there are 8 copies: with noise they spread around the "
            "true offset, λ₂ is their largest (biased up), and the “mean” rule averages them."
        ),
        look_at="Shifts",
        question=("How many eigenvalues cluster near the true offset (orange line) with 5 landmarks, and "
                  "with 12?  Which rule lands closer to the truth, and why is λ₂ biased upward?"),
        config={"n_landmarks": 12, "offset": "lambda2"},
        contrast=(("5 landmarks (ℓ = d + 3)", {"n_landmarks": None, "offset": "lambda2"}),
                  ("12 landmarks, λ₂", {"n_landmarks": 12, "offset": "lambda2"}),
                  ("12 landmarks, mean rule", {"n_landmarks": 12, "offset": "mean"})),
    ),
    Lesson(
        key="noise",
        title="Noise temperature: how much do noisy answers hurt?",
        narrative=(
            "The answers follow P(j closer to i than k) = σ((D<sub>ik</sub> − D<sub>ij</sub>) / T).  "
            "Here one answer in eight is flipped at T = 0.25, about 30 % at the paper's T = 1 and "
            "nearly 40 % at T = 2 (the Sample step counts them).  The scores LOE fits "
            "estimate D / T, so noise also sets the scale of the scores: watch the Ranking step's "
            "axes and the share of flipped answers in the Sample step."
        ),
        look_at="Sample",
        question=("How does the share of flipped answers change from T = 0.25 to T = 2, and how much do "
                  "the Procrustes and triplet errors change?  Which grows faster than the share of flipped "
                  "answers, and why?"),
        config={"temperature": 0.25},
        contrast=(("T = 0.25", {"temperature": 0.25}), ("T = 1 (the paper)", {"temperature": 1.0}),
                  ("T = 2", {"temperature": 2.0})),
    ),
    Lesson(
        key="budget",
        title="The budget: error against c over several seeds",
        narrative=(
            "The paper's budget is c·n·ln n comparisons.  The paper bounds each landmark's ranking error "
            "by O(1/√m); if the error shrinks at that rate, the squared (Procrustes) error should fall "
            "like 1/c and the triplet error like 1/√c: slopes −1 and −1/2 on log-log axes (our "
            "reading of the bound, not a result of the paper).  The sweep fits LOE for each c with three "
            "seeds (n = 500) in the background and fits the slope through all points."
        ),
        look_at="Sweep",
        question=("Do the fitted slopes match −1 and −1/2?  At small c they are flatter: why does the "
                  "asymptotic rate only appear once every item is compared often enough?"),
        config={},
        sweep={"variable": "budget", "values": [25.0, 50.0, 100.0, 200.0, 400.0], "seeds": 3, "n": 500,
               "d": 2, "temperature": 1.0},
    ),
    Lesson(
        key="noiseless",
        title="Noiseless answers: the paper's algorithm alone against the polish",
        narrative=(
            "With T = 0 every answer is true, yet the paper's algorithm alone gives a distorted "
            "layout: a Bradley–Terry fit of noiseless answers has no scale (any monotone transform of "
            "the distances explains them), so the scores are rank-like and landmark MDS bends the "
            "configuration.  LOE's ordinal polish fits the embedding "
            "to the order of the scores instead.  Order has a limit of its own: an item that a landmark "
            "ranks among its farthest is only known to lie farther than the rest, not how far, so the "
            "polish can throw a few edge items too far out (the worst items the Embedding step names) "
            "while it straightens everything else."
        ),
        look_at="Embedding",
        question=("What shape does the distortion of the paper-only layout have (compare the edge and the "
                  "centre)?  Would more comparisons remove it?  Try a larger budget in the sidebar."),
        config={"temperature": 0.0, "paper_only": True},
        contrast=(("Paper's algorithm only", {"paper_only": True}),
                  ("With the ordinal polish", {"paper_only": False})),
    ),
    Lesson(
        key="human",
        title="Crowd answers: random triplets instead of landmarks",
        narrative=(
            "The bundled European-capitals file has 4,000 crowd-style answers.  They follow LOE's own "
            "model (Bradley–Terry on *squared* straight-line distances between the capitals on the globe, "
            "T = 0.1), but for uniformly random triplets, about 92 headed by each capital, not the "
            "landmark design LOE asks for (thousands of comparisons headed by each of a few landmarks).  "
            "“Your triplets” embeds it with LOE (using the busiest items as landmarks) and the baselines, "
            "and scores them on held-out answers."
        ),
        look_at="Your triplets",
        question=("Which method predicts the held-out answers best, and why does LOE, which needs many "
                  "comparisons per landmark, struggle with uniformly random triplets?"),
        sample="european_capitals_crowd.csv",
    ),
    Lesson(
        key="cost",
        title="Cost: fitting time against n",
        narrative=(
            "At a fixed c, LOE draws c·n·ln n comparisons and fits one ranking per landmark, each "
            "Newton step a few passes (the gradient, then conjugate-gradient products) over that landmark's "
            "c·n·ln n / ℓ comparisons, so its time grows like "
            "n log n, while the baselines pay O(m d) per "
            "pass over all coordinates.  A fit here takes hundredths of a second, and anything else the "
            "machine does meanwhile lengthens it: the sweep fits once untimed first (loading the "
            "compiled kernels), then times each fit at least three times and keeps the shortest.  "
            "From n = 1,000 to 16,000 the slope on log-log axes comes out near 1 (n log n alone would "
            "give 1.1 here); below n ≈ 1,000 the fixed costs of a fit dominate and the time hardly grows."
        ),
        look_at="Sweep",
        question=("What slope do you measure for the fit time against n?  Extrapolate: how long would "
                  "n = 10⁶ take?"),
        config={},
        sweep={"variable": "n", "values": [1000, 2000, 4000, 8000, 16000], "seeds": 2, "repeats": 3,
               "budget": 50.0, "d": 2, "temperature": 1.0},
        sweep_metrics=("seconds", "procrustes"),
    ),
)


def lesson_keys() -> tuple[str, ...]:
    """The keys of :data:`LESSONS`, in order."""
    return tuple(x.key for x in LESSONS)


def lesson(key: str) -> Lesson:
    """The lesson called ``key``.

    Raises
    ------
    KeyError
        With the known keys, when there is no such lesson.
    """
    for x in LESSONS:
        if x.key == key:
            return x
    raise KeyError(f"no lesson {key!r}; the lessons are: {', '.join(lesson_keys())}")


def lesson_config(x: Lesson, variant: Mapping | None = None) -> dict:
    """The full explorer configuration of a lesson: :data:`BASE`, its preset, then ``variant``."""
    out = dict(BASE)
    out.update(x.config)
    out.update(variant or {})
    return out
