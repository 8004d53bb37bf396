"""Claims of decentralized optimization: stochastic (being written)."""
