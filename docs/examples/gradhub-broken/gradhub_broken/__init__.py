"""gradhub-broken: a deliberately broken plugin distribution (for tests and documentation).

* :mod:`gradhub_broken.hook_fails` registers a function, then raises inside its hook.
* :mod:`gradhub_broken.import_fails` cannot even be imported.

gradhub must keep working with it installed: each failing plugin is skipped (nothing it registered
is kept), reported once with a :class:`gradhub.PluginLoadWarning`, and listed by
``gradhub plugins`` as failed, with its distribution name and the error.
"""
