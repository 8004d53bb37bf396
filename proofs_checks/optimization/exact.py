"""Claims of decentralized optimization: exact (being written)."""
