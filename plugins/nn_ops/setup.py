"""Build of gradhub-nn-ops' optional C extension (the compiled CPU convolution and pooling
kernels, gradhub_nn_ops.native); everything else is declared in pyproject.toml. Without a working C
compiler the install goes on without the extension and the numpy kernels serve every call."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "gradhub_nn_ops._native_kernels",
            sources=["gradhub_nn_ops/_native/native.c"],
            depends=[
                "gradhub_nn_ops/_native/per_type.h",
                "gradhub_nn_ops/_native/conv_body.h",
                "gradhub_nn_ops/_native/pool_body.h",
                "gradhub_nn_ops/_native/act_body.h",
                "gradhub_nn_ops/_native/norm_body.h",
                "gradhub_nn_ops/_native/bn_body.h",
            ],
            extra_compile_args=["-O3", "-Wno-psabi"],
            optional=True,
        )
    ]
)
