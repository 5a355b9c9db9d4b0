"""gradhub-toy-device: an example device plugin (see :mod:`gradhub_toy_device.plugin`)."""
