"""What a table costs and why it exists: parameters and bytes, why vectors rather
than ids, and the context-free lookup against a model's first layer. No Qt
here.
"""
