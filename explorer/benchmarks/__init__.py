"""The benchmarks that drive the real window (Qt, offscreen): GUI latency,
stalls and frame rates (:mod:`.gui`) and the cost of the training view's
live charts (:mod:`.training`). The Qt-free measurements (opening, the big
table, the lookup) are in :mod:`explorer.core.bench`.
"""
