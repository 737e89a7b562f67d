"""Feature encoding for logged streams, whose categorical columns arrive as text."""

from __future__ import annotations

from river import base


class OneHotText(base.Transformer):
    """One-hot encodes the features that hold text and passes numbers through, so a model that
    takes numbers alone can learn from a table with categorical columns.

    river's `OneHotEncoder` encodes every feature, so a numeric column becomes one indicator per
    distinct value and its order is lost; this one leaves it a number. A missing value (None)
    is left out, as river models read a feature that is absent. Stateless: the encoding of a
    value does not depend on what came before.

    Example
    -------

    >>> OneHotText().transform_one({"amount": 12.5, "colour": "red", "note": None})
    {'amount': 12.5, 'colour_red': 1}
    >>> from river import naive_bayes
    >>> model = OneHotText() | naive_bayes.GaussianNB()
    >>> model.learn_one({"amount": 12.5, "colour": "red"}, True)
    >>> model.predict_one({"amount": 11.0, "colour": "red"})
    True
    """

    def transform_one(self, x: dict) -> dict:
        return {(f"{k}_{v}" if isinstance(v, str) else k): (1 if isinstance(v, str) else v)
                for k, v in x.items() if v is not None}
