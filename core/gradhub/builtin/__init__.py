"""The functions of the core's built-in plugin that are not arithmetic on one or two arrays.

The built-in plugin (provider ``gradhub``) registers every function that the core itself uses:
the Variable operators (``x ** y``, ``abs(x)``, ``x @ y``, ``x[key]``), the engine, the
optimizers and the audit, and every function their backward rules call, so that derivatives of
any order of the core's operators work with no plugin installed. One module per concept:

- :mod:`gradhub.builtin.elementwise`: ``Pow2``, ``Abs``, ``Log``, ``Sign``, ``EqualScalar``;
- :mod:`gradhub.builtin.linalg`: ``BatchMatmul``;
- :mod:`gradhub.builtin.indexing`: ``GetItem`` and its adjoint ``GetItemBackward``;
- :mod:`gradhub.builtin.shape`: ``Transpose``;
- :mod:`gradhub.builtin.samples`: the sample generators of elementwise functions, which
  function libraries (gradhub-nn-ops) use for their own functions too.

The arithmetic, reduction, shape, cast and transfer functions of the operators (``Add2``,
``MulScalar``, ``Sum``, ``Reshape``, ``ToDevice``...) are registered by ``gradhub._builtin``,
which also calls each module's ``register_functions(register)``. Importing these modules
registers nothing.
"""
