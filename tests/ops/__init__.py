"""Op conformance tests, found by op id (``pytest tests/ops -k softmax`` selects one op's tests):

- test_registry.py, test_vectors.py, test_random.py: one test per registered op (parametrised by
  op id) against the single tables: interfaces.py (vyre's builder interface, ULP windows) and
  oracles/ (a NumPy oracle per op id, one module per vyre_vk/ops/<area>/<group>);
- nn/, math/: op-specific tests, test_<module>.py for the op's source module
  vyre_vk/ops/<area>/**/<module>.py (e.g. nn::softmax -> nn/test_softmax.py);
- harness.py, measure.py: shared runners (``python -m tests.ops.measure [substring]``).
"""
