"""The chaos suite's machinery: hosts made of network namespaces (:mod:`.hosts`), an arena
spread over them (:mod:`.cluster`) and the faults injected into it (:mod:`.faults`).

Used by ``tests/chaos`` and ``tacocat bench chaos``; needs root (docs/WORKER.md, "Faults we
test").
"""
