"""Reading streams, the ordered replay and scoring: Beam transforms and the plain-Python pieces
they call (sources, delay models, the replay engine)."""
