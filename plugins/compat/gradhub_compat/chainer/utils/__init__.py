"""chainer's ``chainer.utils``: the parts the layer provides (:mod:`.type_check`)."""
