"""How alike chosen tokens are, three ways: learned vectors, scalar ids, one-hot
vectors. No Qt here.
"""
