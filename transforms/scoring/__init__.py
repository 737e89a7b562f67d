"""From outcomes to measures: the Beam wiring around `metrics`.

`ScoringPlan` says what to measure (bins, Ψα, windows, fading factors, event-time windows);
`ScoreOutcomes` turns a replay's outcomes into summary rows and curve rows, `CompareModels`
compares every pair of models, `DetectDrift` runs Page-Hinkley over the losses and
`ProfileStreams` measures each stream's temporal dependence.

>>> from transforms.scoring import ScoringPlan
>>> ScoringPlan(bins=10, windows=(500,)).views
['cumulative', 'w=500']
"""

from transforms import lazy_exports

_WHERE = {"ScoringPlan": "plan", "ScoreOutcomes": "outcomes", "CompareModels": "comparison",
          "DetectDrift": "drift", "ProfileStreams": "profile"}
__all__ = sorted(_WHERE)
__getattr__ = lazy_exports(__name__, _WHERE)
