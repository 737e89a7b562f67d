"""Feature encoding for logged streams, whose categorical columns arrive as text."""

from __future__ import annotations

from river import base


class OneHotText(base.Transformer):
    """One-hot encodes the features that hold text and passes numbers through, so a model that
    takes numbers alone can learn from a table with categorical columns.

    A text feature becomes one indicator per value it has held so far, in the order they came:
    1 for the row's value, 0 for the others (river's `OneHotEncoder`, whose zeros are what let
    a model tell the values apart: a tree splits on them, GaussianNB's variances are not 0).
    river's `OneHotEncoder` encodes every feature, so a numeric column becomes one indicator per
    distinct value and its order is lost; this one leaves it a number. A missing value (None)
    is left out, as river models read a feature that is absent. A column of thousands of
    distinct texts (an id) makes thousands of features: leave it out with `features`.

    Example
    -------

    >>> encoder = OneHotText()
    >>> encoder.learn_one({"amount": 12.5, "colour": "red"})
    >>> encoder.learn_one({"amount": 3.0, "colour": "blue"})
    >>> encoder.transform_one({"amount": 7.0, "colour": "blue", "note": None})
    {'amount': 7.0, 'colour_red': 0, 'colour_blue': 1}
    >>> encoder.transform_one({"amount": 7.0, "colour": "green"})  # a value not learned yet
    {'amount': 7.0, 'colour_red': 0, 'colour_blue': 0, 'colour_green': 1}
    """

    def __init__(self):
        self.values: dict = {}  # text feature -> {its values so far: their names}, in order
        self._zeros: dict = {}  # text feature -> {its values' names: 0} (made once per value)

    def learn_one(self, x: dict) -> None:
        for k, v in x.items():
            if isinstance(v, str):
                known = self.values.setdefault(k, {})
                if v not in known:
                    known[v] = f"{k}_{v}"
                    self._zeros[k] = dict.fromkeys(known.values(), 0)

    def transform_one(self, x: dict) -> dict:
        out = {}
        for k, v in x.items():
            if isinstance(v, str):
                known = self.values.get(k)
                name = None
                if known:
                    out.update(self._zeros[k])
                    name = known.get(v)
                out[name or f"{k}_{v}"] = 1
            elif v is not None:
                out[k] = v
        return out
