"""The Tacocat Arena lab: what measures and tortures the product, and is not part of it.

- :mod:`tacocat_lab.bench`: the benchmarks behind ``tacocat bench``;
- :mod:`tacocat_lab.plain_game`: a plain implementation of RULES.md, the engine benchmark's
  baseline;
- :mod:`tacocat_lab.chaos`: an arena spread over hosts made of network namespaces, and the
  faults the chaos suite (``tests/chaos``, ``tacocat bench chaos``) injects into it.

Installed by ``./dev setup`` (or ``pip install -e lab/``), never by ``pip install
tacocat-arena``. It uses only the public names of ``tacocat``'s parts.
"""
