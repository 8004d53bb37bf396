"""decentral: decentralized algorithms on time-varying directed graphs, JAX-vectorized.

Orientation convention, used everywhere: ``W[i, j] > 0`` (or ``adj[i, j]`` True) means agent
``i`` *receives from* agent ``j``; every agent has a self-loop.

The library never changes global JAX configuration on import; verification entry points
(``python -m proofs_checks``) enable float64 themselves.
"""

__version__ = "0.1.0"
