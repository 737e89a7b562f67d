"""Streams: what a `--stream` spec names and how its events are read.

`StreamSpec` parses a spec (a CSV/JSON Lines/Parquet table, an ARFF file, a river generator or
dataset) and yields its events; `DelaySpec` gives labels their arrival time when the input has
none; `ReadStreams` is the Beam source that reads every configured stream in chunks of events.
Everything but `ReadStreams` is plain Python.

>>> from transforms.streams import StreamSpec
>>> StreamSpec.parse('sea=synth:SEA{"n": 10}').name
'sea'
"""

from transforms import lazy_exports

_WHERE = {"StreamSpec": "sources", "DelaySpec": "delays", "LabelTimeAssigner": "delays",
          "river_stream": "generators", "load_arff": "arff", "table_files": "table_files",
          "ReadStreams": "read", "TimeRange": "read"}
__all__ = sorted(_WHERE)
__getattr__ = lazy_exports(__name__, _WHERE)
