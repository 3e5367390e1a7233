"""The lookup two ways (a gather, one-hot @ E), its animation frames and its
backward step. No Qt here.
"""
