"""Writes ``functions_more_reference.npz``: chainer 7.8.1's results for the cases below, which
``tests/compat/chainer/test_functions_more.py`` runs through gradhub_compat and compares.

Run it with chainer 7.8.1 (CPU, numpy 1.26) from this folder::

    python make_functions_more_reference.py

(the test imports ``CASES``, ``ERRORS`` and ``weights`` from this file; chainer is imported only
when it runs as a script). For each case it evaluates the expression in test mode
(``TRAIN(f)`` calls ``f`` in training mode), after
``numpy.random.seed(seed)`` when the case has a seed, with the inputs as chainer Variables, and
stores, under ``<name>/``: ``tuple`` (whether a tuple came back), ``n`` (the number of outputs),
``y<i>`` (each output's array) and, when inputs are differentiated, ``g<j>`` (the gradient of
input j from ``chainer.grad(ys, xs, grad_outputs=weights(k=1), enable_double_backprop=True)``;
absent: None) and ``gg<j>`` (the gradient of ``sum_j sum(g_j * weights(k=2))``; absent: None) or
``gg_error`` (the exception chainer raises there; for ``F.forget``, whose backward refuses
``enable_double_backprop``, ``g<j>`` are then computed without it). For each of ``ERRORS`` it stores
``error/<name>``, the name of the exception chainer raises (``""``: none). Only plain arrays are
written (strings as unicode arrays), so the test loads the file without unpickling anything.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# (name, expression, inputs: {name: numpy expression}, inputs differentiated, seed or None)
CASES: list[tuple[str, str, dict[str, str], list[str], int | None]] = [
    (
        "pad_sequence",
        "F.pad_sequence([a, b, c])",
        {
            "a": "np.linspace(-1, 1, 6).reshape(3, 2).astype(np.float32)",
            "b": "np.linspace(0.5, 2, 2).reshape(1, 2).astype(np.float32)",
            "c": "np.linspace(-2, 0, 4).reshape(2, 2).astype(np.float32)",
        },
        ["a", "b", "c"],
        None,
    ),
    (
        "pad_sequence_length_padding",
        "F.pad_sequence([a, b], length=4, padding=-1.5)",
        {
            "a": "np.linspace(-1, 1, 3).astype(np.float64)",
            "b": "np.linspace(0.5, 2, 2).astype(np.float64)",
        },
        ["a", "b"],
        None,
    ),
    (
        "pad_sequence_int",
        "F.pad_sequence([a, b], padding=7)",
        {"a": "np.array([1, 2, 3], np.int32)", "b": "np.array([4], np.int32)"},
        [],
        None,
    ),
    (
        "transpose_sequence",
        "F.transpose_sequence([a, b, c])",
        {
            "a": "np.linspace(-1, 1, 8).reshape(4, 2).astype(np.float32)",
            "b": "np.linspace(0.5, 2, 4).reshape(2, 2).astype(np.float32)",
            "c": "np.linspace(-2, 0, 2).reshape(1, 2).astype(np.float32)",
        },
        ["a", "b", "c"],
        None,
    ),
    (
        "transpose_sequence_equal",
        "F.transpose_sequence([a, b])",
        {
            "a": "np.linspace(-1, 1, 3).astype(np.float32)",
            "b": "np.linspace(0.5, 2, 3).astype(np.float32)",
        },
        ["a", "b"],
        None,
    ),
    (
        "separate_axis0",
        "F.separate(x)",
        {"x": "np.linspace(-1, 1, 6).reshape(3, 2).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "separate_axis_neg",
        "F.separate(x, axis=-1)",
        {"x": "np.linspace(-1, 1, 12).reshape(2, 2, 3).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "separate_some_outputs",
        "F.separate(x, axis=1)[1]",
        {"x": "np.linspace(-1, 1, 6).reshape(2, 3).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "permutate",
        "F.permutate(x, np.array([2, 0, 1], np.int32))",
        {"x": "np.linspace(-1, 1, 6).reshape(3, 2).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "permutate_axis1_inv",
        "F.permutate(x, np.array([1, 3, 0, 2], np.int32), axis=1, inv=True)",
        {"x": "np.linspace(-1, 1, 8).reshape(2, 4).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "forget",
        "F.forget(lambda a, b: (a * b + F.sin(a), F.exp(b)), a, b)",
        {
            "a": "np.linspace(-1, 1, 3).astype(np.float32)",
            "b": "np.linspace(0.5, 2, 3).astype(np.float32)",
        },
        ["a", "b"],
        None,
    ),
    (
        "forget_one",
        "F.forget(lambda a: F.tanh(a) * a, a)",
        {"a": "np.linspace(-1, 1, 4).astype(np.float64)"},
        ["a"],
        None,
    ),
    (
        "crelu",
        "F.crelu(x)",
        {"x": "np.linspace(-1, 1, 6).reshape(2, 3).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "crelu_axis0",
        "F.crelu(x, axis=0)",
        {"x": "np.array([[-1.5, 0.5], [2.0, -0.25]], np.float64)"},
        ["x"],
        None,
    ),
    (
        "crelu_axis_neg",
        "F.crelu(x, axis=-1)",
        {"x": "np.linspace(-1, 1.2, 12).reshape(2, 2, 3).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "gaussian",
        "F.gaussian(m, v)",
        {
            "m": "np.linspace(-1, 1, 6).reshape(2, 3).astype(np.float32)",
            "v": "np.linspace(-0.5, 0.5, 6).reshape(2, 3).astype(np.float32)",
        },
        ["m", "v"],
        3,
    ),
    (
        "gaussian_eps",
        "F.gaussian(m, v, eps=np.array([0.5, -1.0, 2.0], np.float64), return_eps=True)[0]",
        {
            "m": "np.linspace(-1, 1, 3).astype(np.float64)",
            "v": "np.linspace(-0.5, 0.5, 3).astype(np.float64)",
        },
        ["m", "v"],
        None,
    ),
    (
        "gaussian_return_eps",
        "F.gaussian(m, v, return_eps=True)[1]",
        {
            "m": "np.zeros((2, 2), np.float32)",
            "v": "np.zeros((2, 2), np.float32)",
        },
        [],
        5,
    ),
    (
        "gumbel_softmax",
        "F.gumbel_softmax(x)",
        {"x": "np.log(np.linspace(0.1, 0.6, 6).reshape(2, 3)).astype(np.float32)"},
        ["x"],
        4,
    ),
    (
        "gumbel_softmax_tau_axis",
        "F.gumbel_softmax(x, tau=0.7, axis=0)",
        {"x": "np.log(np.linspace(0.1, 0.6, 6).reshape(3, 2)).astype(np.float64)"},
        ["x"],
        6,
    ),
    (
        "binary_accuracy",
        "F.binary_accuracy(y, t)",
        {
            "y": "np.array([[-1.0, 2.0, 0.0], [0.5, -3.0, -0.1]], np.float32)",
            "t": "np.array([[0, 1, 0], [1, -1, 1]], np.int32)",
        },
        [],
        None,
    ),
    (
        "binary_accuracy_all_ignored",
        "F.binary_accuracy(y, t)",
        {"y": "np.array([1.0, -2.0], np.float64)", "t": "np.array([-1, -1], np.int32)"},
        [],
        None,
    ),
    (
        "classification_summary",
        "F.classification_summary(y, t)",
        {
            "y": "np.array([[.1, .9, 0], [.8, .1, .1], [.2, .3, .5], [.6, .3, .1], [.1, .1, .8]],"
            " np.float32)",
            "t": "np.array([1, 1, 2, -1, 0], np.int32)",
        },
        [],
        None,
    ),
    (
        "classification_summary_args",
        "F.classification_summary(y, t, label_num=4, beta=2.0, ignore_label=0)",
        {
            "y": "np.sin(np.arange(24.0)).reshape(3, 4, 2).astype(np.float32)",
            "t": "np.array([[1, 0], [3, 2], [0, 1]], np.int32)",
        },
        [],
        None,
    ),
    (
        "precision",
        "F.precision(y, t)",
        {
            "y": "np.array([[.1, .9], [.8, .2], [.3, .7], [.6, .4]], np.float32)",
            "t": "np.array([1, 1, 0, 0], np.int32)",
        },
        [],
        None,
    ),
    (
        "recall",
        "F.recall(y, t, label_num=3)",
        {
            "y": "np.array([[.1, .9], [.8, .2], [.3, .7], [.6, .4]], np.float32)",
            "t": "np.array([1, 1, 0, 0], np.int32)",
        },
        [],
        None,
    ),
    (
        "f1_score",
        "F.f1_score(y, t, ignore_label=1)",
        {
            "y": "np.array([[.1, .9], [.8, .2], [.3, .7], [.6, .4]], np.float64)",
            "t": "np.array([1, 1, 0, 0], np.int32)",
        },
        [],
        None,
    ),
    (
        "r2_score",
        "F.r2_score(p, t)",
        {
            "p": "np.array([[1.0, 2.0], [3.0, 5.0], [2.0, 2.5]], np.float32)",
            "t": "np.array([[1.5, 2.0], [2.5, 4.0], [2.0, 3.0]], np.float32)",
        },
        [],
        None,
    ),
    (
        "r2_score_raw",
        "F.r2_score(p, t, multioutput='raw_values')",
        {
            "p": "np.array([[1.0, 2.0], [3.0, 5.0], [2.0, 2.5]], np.float64)",
            "t": "np.array([[1.5, 2.0], [2.5, 2.0], [2.0, 2.0]], np.float64)",
        },
        [],
        None,
    ),
    (
        "inv",
        "F.inv(a)",
        {"a": "np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.1, 0.4, 3.0]], np.float32)"},
        ["a"],
        None,
    ),
    (
        "inv_f64",
        "F.inv(a)",
        {"a": "np.array([[1.0, 2.0], [3.0, 4.5]], np.float64)"},
        ["a"],
        None,
    ),
    (
        "batch_inv",
        "F.batch_inv(a)",
        {"a": "(np.eye(2) * 2 + np.sin(np.arange(8.0)).reshape(2, 2, 2) * 0.5).astype(np.float32)"},
        ["a"],
        None,
    ),
    (
        "det",
        "F.det(a)",
        {"a": "np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.1, 0.4, 3.0]], np.float32)"},
        ["a"],
        None,
    ),
    (
        "batch_det",
        "F.batch_det(a)",
        {"a": "(np.eye(3) * 2 + np.sin(np.arange(18.0)).reshape(2, 3, 3)).astype(np.float64)"},
        ["a"],
        None,
    ),
    (
        "cholesky",
        "F.cholesky(a)",
        {"a": "np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float64)"},
        ["a"],
        None,
    ),
    (
        "cholesky_f32",
        "F.cholesky(a)",
        {"a": "np.array([[4.0, 2.0], [2.0, 5.0]], np.float32)"},
        ["a"],
        None,
    ),
    (
        "linear_interpolate",
        "F.linear_interpolate(p, x, y)",
        {
            "p": "np.linspace(0, 1, 6).reshape(2, 3).astype(np.float32)",
            "x": "np.linspace(-1, 1, 6).reshape(2, 3).astype(np.float32)",
            "y": "np.linspace(2, -0.5, 6).reshape(2, 3).astype(np.float32)",
        },
        ["p", "x", "y"],
        None,
    ),
    (
        "im2col",
        "F.im2col(x, 2)",
        {"x": "np.sin(np.arange(24.0)).reshape(1, 2, 3, 4).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "im2col_args",
        "F.im2col(x, (2, 3), stride=(2, 1), pad=(1, 2), dilate=(1, 2))",
        {"x": "np.sin(np.arange(40.0)).reshape(2, 1, 4, 5).astype(np.float64)"},
        ["x"],
        None,
    ),
    (
        "im2col_cover_all",
        "F.im2col(x, 2, stride=2, pad=1, cover_all=True)",
        {"x": "np.sin(np.arange(25.0)).reshape(1, 1, 5, 5).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "unpooling_1d",
        "F.unpooling_1d(x, 2)",
        {"x": "np.sin(np.arange(6.0)).reshape(1, 2, 3).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "unpooling_1d_overlap",
        "F.unpooling_1d(x, 3, stride=2, pad=1, cover_all=False)",
        {"x": "np.sin(np.arange(8.0)).reshape(2, 1, 4).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "unpooling_nd_2d_outsize",
        "F.unpooling_nd(x, 2, stride=2, pad=1, outsize=(2, 4))",
        {"x": "np.sin(np.arange(12.0)).reshape(1, 2, 2, 3).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "unpooling_3d",
        "F.unpooling_3d(x, (2, 1, 2), stride=(1, 2, 2), cover_all=False)",
        {"x": "np.sin(np.arange(12.0)).reshape(1, 1, 2, 2, 3).astype(np.float64)"},
        ["x"],
        None,
    ),
    (
        "spatial_pyramid_pooling_2d",
        "F.spatial_pyramid_pooling_2d(x, 3, pooling='max')",
        {"x": "np.sin(np.arange(70.0) * 1.3).reshape(1, 2, 5, 7).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "crf1d",
        "F.crf1d(cost, [a, b, c], [np.array([0, 2, 1], np.int32), np.array([1, 1], np.int32), "
        "np.array([2], np.int32)])",
        {
            "cost": "np.sin(np.arange(9.0) * 0.7).reshape(3, 3).astype(np.float32)",
            "a": "np.cos(np.arange(9.0)).reshape(3, 3).astype(np.float32)",
            "b": "np.sin(np.arange(6.0) * 1.7).reshape(2, 3).astype(np.float32)",
            "c": "np.cos(np.arange(3.0) * 2.1).reshape(1, 3).astype(np.float32)",
        },
        ["cost", "a", "b", "c"],
        None,
    ),
    (
        "crf1d_no",
        "F.crf1d(cost, [a, b, c], [np.array([2, 0, 1], np.int32), np.array([0, 2], np.int32), "
        "np.array([1], np.int32)], reduce='no')",
        {
            "cost": "np.sin(np.arange(9.0) * 0.7).reshape(3, 3).astype(np.float32)",
            "a": "np.cos(np.arange(9.0)).reshape(3, 3).astype(np.float32)",
            "b": "np.sin(np.arange(6.0) * 1.7).reshape(2, 3).astype(np.float32)",
            "c": "np.cos(np.arange(3.0) * 2.1).reshape(1, 3).astype(np.float32)",
        },
        ["cost", "a", "b", "c"],
        None,
    ),
    (
        "crf1d_equal_lengths",
        "F.crf1d(cost, [a, b], [np.array([0, 2], np.int32), np.array([1, 0], np.int32)])",
        {
            "cost": "np.sin(np.arange(9.0) * 0.7).reshape(3, 3).astype(np.float64)",
            "a": "np.cos(np.arange(6.0)).reshape(2, 3).astype(np.float64)",
            "b": "np.sin(np.arange(6.0) * 1.7).reshape(2, 3).astype(np.float64)",
        },
        ["cost", "a", "b"],
        None,
    ),
    (
        "argmax_crf1d_score",
        "F.argmax_crf1d(cost, [a, b, c])[0]",
        {
            "cost": "np.sin(np.arange(9.0) * 0.7).reshape(3, 3).astype(np.float32)",
            "a": "np.cos(np.arange(9.0)).reshape(3, 3).astype(np.float32)",
            "b": "np.sin(np.arange(6.0) * 1.7).reshape(2, 3).astype(np.float32)",
            "c": "np.cos(np.arange(3.0) * 2.1).reshape(1, 3).astype(np.float32)",
        },
        ["cost", "a", "b", "c"],
        None,
    ),
    (
        "argmax_crf1d_path",
        "tuple(F.argmax_crf1d(cost, [a, b, c])[1])",
        {
            "cost": "np.sin(np.arange(9.0) * 0.7).reshape(3, 3).astype(np.float32)",
            "a": "np.cos(np.arange(9.0)).reshape(3, 3).astype(np.float32)",
            "b": "np.sin(np.arange(6.0) * 1.7).reshape(2, 3).astype(np.float32)",
            "c": "np.cos(np.arange(3.0) * 2.1).reshape(1, 3).astype(np.float32)",
        },
        [],
        None,
    ),
    (
        "ctc",
        "F.connectionist_temporal_classification([x0, x1, x2, x3], "
        "np.array([[1, 1, 2], [3, 0, 0]], np.int32), 0, np.array([4, 3], np.int32), "
        "np.array([3, 1], np.int32))",
        {
            "x0": "np.sin(np.arange(8.0)).reshape(2, 4).astype(np.float32)",
            "x1": "np.sin(np.arange(8.0) * 2).reshape(2, 4).astype(np.float32)",
            "x2": "np.sin(np.arange(8.0) * 3).reshape(2, 4).astype(np.float32)",
            "x3": "np.sin(np.arange(8.0) * 4).reshape(2, 4).astype(np.float32)",
        },
        ["x0", "x1", "x2", "x3"],
        None,
    ),
    (
        "ctc_no_defaults",
        "F.connectionist_temporal_classification([x0, x1, x2, x3], "
        "np.array([[1, 2], [3, 3]], np.int32), 2, reduce='no')",
        {
            "x0": "np.sin(np.arange(8.0)).reshape(2, 4).astype(np.float32)",
            "x1": "np.sin(np.arange(8.0) * 2).reshape(2, 4).astype(np.float32)",
            "x2": "np.sin(np.arange(8.0) * 3).reshape(2, 4).astype(np.float32)",
            "x3": "np.sin(np.arange(8.0) * 4).reshape(2, 4).astype(np.float32)",
        },
        ["x0", "x1", "x2", "x3"],
        None,
    ),
    (
        "ctc_empty_label_f64",
        "F.connectionist_temporal_classification([x0, x1], np.array([[1], [2]], np.int32), 0, "
        "np.array([2, 1], np.int32), np.array([0, 1], np.int32), reduce='no')",
        {
            "x0": "np.sin(np.arange(6.0)).reshape(2, 3).astype(np.float64)",
            "x1": "np.cos(np.arange(6.0)).reshape(2, 3).astype(np.float64)",
        },
        ["x0", "x1"],
        None,
    ),
    (
        "roi_pooling_2d",
        "F.roi_pooling_2d(x, np.array([[0, 1, 0.6, 5.2, 4], [1, 0, 2, 3.4, 5.9], [1, 2, 2, 2, "
        "2]], np.float32), 3, 2, 1.0)",
        {"x": "np.sin(np.arange(252.0) * 1.3).reshape(2, 3, 6, 7).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "roi_pooling_2d_scale",
        "F.roi_pooling_2d(x, np.array([[0, 1, 0.6, 5.2, 4], [1, 0, 2, 3.4, 5.9], [1, 2, 2, 2, "
        "2]], np.float32) * np.array([1, 2, 2, 2, 2], np.float32), 2, 3, 0.5)",
        {"x": "np.sin(np.arange(252.0) * 1.3).reshape(2, 3, 6, 7).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "roi_max_pooling_2d",
        "F.roi_max_pooling_2d(x, np.array([[0.6, 1, 4, 5.2], [2, 0, 5.9, 3.4], [2, 2, 2.5, "
        "2.2]], np.float32), np.array([0, 1, 1], np.int32), (3, 2), 1.0)",
        {"x": "np.sin(np.arange(252.0) * 1.3).reshape(2, 3, 6, 7).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "roi_max_pooling_2d_empty",
        "F.roi_max_pooling_2d(x, np.array([[0, 0, 9, 9]], np.float32), np.array([0], np.int32), "
        "4, 1.0)",
        {"x": "np.sin(np.arange(252.0) * 1.3).reshape(2, 3, 6, 7).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "roi_average_pooling_2d",
        "F.roi_average_pooling_2d(x, np.array([[0.6, 1, 4, 5.2], [2, 0, 5.9, 3.4], [2, 2, 2.5, "
        "2.2]], np.float32), np.array([0, 1, 1], np.int32), 2, 1.0)",
        {"x": "np.sin(np.arange(252.0) * 1.3).reshape(2, 3, 6, 7).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "roi_average_align_2d",
        "F.roi_average_align_2d(x, np.array([[0.6, 1, 4, 5.2], [2, 0, 5.9, 3.4], [2, 2, 2.5, "
        "2.2]], np.float32), np.array([0, 1, 1], np.int32), (2, 3), 1.0)",
        {"x": "np.sin(np.arange(252.0) * 1.3).reshape(2, 3, 6, 7).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "roi_average_align_2d_sr",
        "F.roi_average_align_2d(x, np.array([[0.6, 1, 4, 5.2], [2, 0, 5.9, 3.4], [2, 2, 2.5, "
        "2.2]], np.float32) * 2, np.array([0, 1, 1], np.int32), 2, 0.5, sampling_ratio=(2, 1))",
        {"x": "np.sin(np.arange(252.0) * 1.3).reshape(2, 3, 6, 7).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "roi_max_align_2d",
        "F.roi_max_align_2d(x, np.array([[0.6, 1, 4, 5.2], [2, 0, 5.9, 3.4], [2, 2, 2.5, 2.2]], "
        "np.float32), np.array([0, 1, 1], np.int32), (2, 3), 1.0)",
        {"x": "np.sin(np.arange(252.0) * 1.3).reshape(2, 3, 6, 7).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "roi_max_align_2d_sr",
        "F.roi_max_align_2d(x, np.array([[0.6, 1, 4, 5.2], [2, 0, 5.9, 3.4], [2, 2, 2.5, 2.2]], "
        "np.float32), np.array([0, 1, 1], np.int32), 2, 1.0, sampling_ratio=3)",
        {"x": "np.sin(np.arange(252.0) * 1.3).reshape(2, 3, 6, 7).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "batch_renormalization",
        "TRAIN(lambda: F.batch_renormalization(x, g, b, 1.5, 0.3, "
        "running_mean=np.linspace(-0.2, 0.2, 6).astype(np.float32), "
        "running_var=np.linspace(0.3, 1.5, 6).astype(np.float32)))",
        {
            "x": "np.sin(np.arange(48.0) * 1.7).reshape(4, 6, 2).astype(np.float32)",
            "g": "np.linspace(0.5, 1.5, 6).astype(np.float32)",
            "b": "np.linspace(-1, 1, 6).astype(np.float32)",
        },
        ["x", "g", "b"],
        None,
    ),
    (
        "batch_renormalization_update",
        "TRAIN(lambda: (lambda rm, rv: (F.batch_renormalization(x, g, b, 2.0, 0.1, eps=1e-3, "
        "running_mean=rm, running_var=rv, decay=0.8, update_statistics=True), rm, rv))"
        "(np.full(3, 0.5, np.float64), np.full(3, 2.0, np.float64)))",
        {
            "x": "np.sin(np.arange(36.0) * 0.9).reshape(2, 3, 2, 3).astype(np.float64)",
            "g": "np.linspace(0.5, 1.5, 3).astype(np.float64)",
            "b": "np.linspace(-1, 1, 3).astype(np.float64)",
        },
        [],
        None,
    ),
    (
        "decorrelated_batch_normalization",
        "F.decorrelated_batch_normalization(x, groups=2)",
        {"x": "np.sin(np.arange(40.0) * 1.7).reshape(5, 4, 2).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "decorrelated_batch_normalization_update",
        "(lambda rm, rp: (F.decorrelated_batch_normalization(x, groups=1, eps=1e-3, "
        "running_mean=rm, running_projection=rp, decay=0.5), rm, rp))"
        "(np.zeros((1, 3), np.float64), np.eye(3)[None].copy())",
        {"x": "np.sin(np.arange(24.0) * 1.1).reshape(4, 3, 2).astype(np.float64)"},
        [],
        None,
    ),
    (
        "fixed_decorrelated_batch_normalization",
        "F.fixed_decorrelated_batch_normalization(x, np.array([[0.1, -0.2], [0.3, 0.0]], "
        "np.float32), np.array([[[1, 0.5], [0.2, 2]], [[1.5, 0], [0.3, 0.7]]], np.float32), "
        "groups=2)",
        {"x": "np.sin(np.arange(40.0) * 1.7).reshape(5, 4, 2).astype(np.float32)"},
        ["x"],
        None,
    ),
    (
        "spatial_transformer_grid",
        "F.spatial_transformer_grid(theta, (3, 4))",
        {
            "theta": "np.array([[[0.9, 0.2, 0.1], [-0.3, 1.1, -0.2]], "
            "[[1.3, -0.1, 0.05], [0.4, 0.8, 0.3]]], np.float32)"
        },
        ["theta"],
        None,
    ),
    (
        "spatial_transformer_sampler",
        "F.spatial_transformer_sampler(x, grid)",
        {
            "x": "np.sin(np.arange(80.0) * 1.1).reshape(2, 2, 4, 5).astype(np.float32)",
            "grid": "np.cos(np.arange(24.0) * 0.7).reshape(2, 2, 2, 3).astype(np.float32) * 1.3",
        },
        ["x", "grid"],
        None,
    ),
    (
        "spatial_transformer_composed",
        "F.spatial_transformer_sampler(x, F.spatial_transformer_grid(theta, (3, 4)))",
        {
            "x": "np.sin(np.arange(80.0) * 1.1).reshape(2, 2, 4, 5).astype(np.float64)",
            "theta": "np.array([[[0.9, 0.2, 0.1], [-0.3, 1.1, -0.2]], "
            "[[1.3, -0.1, 0.05], [0.4, 0.8, 0.3]]], np.float64)",
        },
        ["x", "theta"],
        None,
    ),
    (
        "cross_covariance",
        "F.cross_covariance(y, z)",
        {
            "y": "np.sin(np.arange(12.0)).reshape(4, 3).astype(np.float32)",
            "z": "np.cos(np.arange(8.0)).reshape(4, 2).astype(np.float32)",
        },
        ["y", "z"],
        None,
    ),
    (
        "cross_covariance_no",
        "F.cross_covariance(y, z, reduce='no')",
        {
            "y": "np.sin(np.arange(12.0)).reshape(4, 3).astype(np.float32)",
            "z": "np.cos(np.arange(8.0)).reshape(4, 2).astype(np.float32)",
        },
        ["y", "z"],
        None,
    ),
    (
        "decov",
        "F.decov(h)",
        {
            "h": "np.sin(np.arange(12.0)).reshape(4, 3).astype(np.float32)",
        },
        ["h"],
        None,
    ),
    (
        "decov_no",
        "F.decov(h, reduce='no')",
        {
            "h": "np.sin(np.arange(12.0)).reshape(4, 3)",
        },
        ["h"],
        None,
    ),
    (
        "fft",
        "F.fft((r, i))",
        {
            "r": "np.sin(np.arange(8.0)).reshape(2, 4).astype(np.float32)",
            "i": "np.cos(np.arange(8.0)).reshape(2, 4).astype(np.float32)",
        },
        ["r", "i"],
        None,
    ),
    (
        "ifft",
        "F.ifft((r, i))",
        {
            "r": "np.sin(np.arange(8.0)).reshape(2, 4).astype(np.float64)",
            "i": "np.cos(np.arange(8.0)).reshape(2, 4).astype(np.float64)",
        },
        ["r", "i"],
        None,
    ),
    (
        "shift",
        "F.shift(x)",
        {
            "x": "np.sin(np.arange(240.0)).reshape(2, 10, 3, 4).astype(np.float32)",
        },
        ["x"],
        None,
    ),
    (
        "shift_args",
        "F.shift(x, ksize=(3, 1), dilate=(2, -1))",
        {
            "x": "np.sin(np.arange(240.0)).reshape(2, 10, 3, 4).astype(np.float32)",
        },
        ["x"],
        None,
    ),
    (
        "zoneout",
        "TRAIN(lambda: F.zoneout(h, x, 0.3))",
        {
            "h": "np.sin(np.arange(12.0)).reshape(3, 4).astype(np.float32)",
            "x": "np.cos(np.arange(12.0)).reshape(3, 4).astype(np.float32)",
        },
        ["h", "x"],
        3,
    ),
    (
        "zoneout_test",
        "F.zoneout(h, x)",
        {
            "h": "np.zeros((2, 2), np.float32)",
            "x": "np.ones((2, 2), np.float32)",
        },
        ["h", "x"],
        None,
    ),
    (
        "simplified_dropconnect",
        "F.simplified_dropconnect(x, W, b, ratio=0.4)",
        {
            "x": "np.sin(np.arange(6.0)).reshape(2, 3).astype(np.float32)",
            "W": "np.cos(np.arange(12.0)).reshape(4, 3).astype(np.float32)",
            "b": "np.arange(4.0).astype(np.float32)",
        },
        ["x", "W", "b"],
        4,
    ),
    (
        "simplified_dropconnect_nb",
        "F.simplified_dropconnect(x, W, ratio=0.3, use_batchwise_mask=False)",
        {
            "x": "np.sin(np.arange(6.0)).reshape(2, 1, 3)",
            "W": "np.cos(np.arange(12.0)).reshape(4, 3)",
        },
        ["x", "W"],
        5,
    ),
    (
        "simplified_dropconnect_mask",
        "F.simplified_dropconnect(x, W, ratio=0.5, train=False, mask=np.ones((2, 4, 3), bool))",
        {
            "x": "np.sin(np.arange(6.0)).reshape(2, 3).astype(np.float32)",
            "W": "np.cos(np.arange(12.0)).reshape(4, 3).astype(np.float32)",
        },
        ["x", "W"],
        None,
    ),
    (
        "local_convolution_2d",
        "F.local_convolution_2d(x, W, b, stride=(2, 1))",
        {
            "x": "np.sin(np.arange(100.0)).reshape(2, 2, 5, 5).astype(np.float32)",
            "W": "np.cos(np.arange(144.0)).reshape(3, 2, 2, 2, 2, 3).astype(np.float32)",
            "b": "np.arange(12.0).reshape(3, 2, 2).astype(np.float32)",
        },
        ["x", "W", "b"],
        None,
    ),
    (
        "black_out",
        "F.black_out(x, np.array([0, 3], np.int32), W, np.array([[1, 2], [4, 1]], np.int32))",
        {
            "x": "np.sin(np.arange(6.0)).reshape(2, 3).astype(np.float32)",
            "W": "np.cos(np.arange(15.0)).reshape(5, 3).astype(np.float32)",
        },
        ["x", "W"],
        None,
    ),
    (
        "black_out_no",
        "F.black_out(x, np.array([0, 3], np.int32), W, np.array([[1, 2], [4, 1]], np.int32), "
        "reduce='no')",
        {
            "x": "np.sin(np.arange(6.0)).reshape(2, 3)",
            "W": "np.cos(np.arange(15.0)).reshape(5, 3)",
        },
        ["x", "W"],
        None,
    ),
    (
        "tree_lstm",
        "F.tree_lstm(c1, c2, x)",
        {
            "c1": "np.sin(np.arange(6.0)).reshape(2, 3).astype(np.float32)",
            "c2": "np.cos(np.arange(6.0)).reshape(2, 3).astype(np.float32)",
            "x": "np.sin(np.arange(30.0) * 0.7).reshape(2, 15).astype(np.float32)",
        },
        ["c1", "c2", "x"],
        None,
    ),
    (
        "tree_lstm_unary_3d",
        "F.tree_lstm(c, x)",
        {
            "c": "np.sin(np.arange(8.0)).reshape(2, 2, 2)",
            "x": "np.cos(np.arange(32.0) * 0.3).reshape(2, 8, 2)",
        },
        ["c", "x"],
        None,
    ),
    (
        "discriminative_loss",
        "F.discriminative_margin_based_clustering_loss(e, np.array([[[1, 1, 2], [0, 3, 2]]], "
        "np.int32), 0.2, 0.8, 3, alpha=1.1, beta=0.9, gamma=0.01)",
        {
            "e": "np.sin(np.arange(18.0) * 0.9).reshape(1, 3, 2, 3).astype(np.float32)",
        },
        ["e"],
        None,
    ),
    (
        "discriminative_loss_l2",
        "F.discriminative_margin_based_clustering_loss(e, np.array([[[1, 1, 2], [0, 3, 2]]], "
        "np.int32), 0.2, 0.8, 3, norm=2)",
        {
            "e": "np.sin(np.arange(18.0) * 0.9).reshape(1, 3, 2, 3).astype(np.float32)",
        },
        [],
        None,
    ),
    (
        "negative_sampling",
        "F.negative_sampling(x, np.array([3, -1], np.int32), W, "
        "lambda s: (np.arange(s[0] * s[1]).reshape(s) % 5).astype(np.int32), 2)",
        {
            "x": "np.sin(np.arange(6.0)).reshape(2, 3).astype(np.float32)",
            "W": "np.cos(np.arange(15.0)).reshape(5, 3).astype(np.float32)",
        },
        ["x", "W"],
        None,
    ),
    (
        "negative_sampling_no",
        "F.negative_sampling(x, np.array([3, 1], np.int32), W, "
        "lambda s: (np.arange(s[0] * s[1]).reshape(s) % 5).astype(np.int32), 3, reduce='no', "
        "return_samples=True)",
        {
            "x": "np.sin(np.arange(6.0)).reshape(2, 3)",
            "W": "np.cos(np.arange(15.0)).reshape(5, 3)",
        },
        [],
        None,
    ),
    (
        "negative_sampling_no_grad",
        "F.negative_sampling(x, np.array([3, 1], np.int32), W, "
        "lambda s: (np.arange(s[0] * s[1]).reshape(s) % 5).astype(np.int32), 3, reduce='no')",
        {
            "x": "np.sin(np.arange(6.0)).reshape(2, 3)",
            "W": "np.cos(np.arange(15.0)).reshape(5, 3)",
        },
        ["x", "W"],
        None,
    ),
    (
        "as_strided",
        "F.as_strided(x, (3, 2), (2, 1))",
        {
            "x": "np.sin(np.arange(6.0)).astype(np.float32)",
        },
        ["x"],
        None,
    ),
    (
        "as_strided_overlap",
        "F.as_strided(x, (2, 3), (1, 2), 1)",
        {
            "x": "np.sin(np.arange(8.0))",
        },
        ["x"],
        None,
    ),
]

# (name, expression): chainer's exception for bad input (``""``: none); ``Z(*shape, dt=...)``
# makes zeros, ``E(n)`` an n x n identity
ERRORS: list[tuple[str, str]] = [
    ("pad_sequence_empty", "F.pad_sequence([])"),
    ("pad_sequence_0d", "F.pad_sequence([Z()])"),
    ("pad_sequence_shapes", "F.pad_sequence([Z(2, 3), Z(2, 2)])"),
    ("pad_sequence_dtypes", "F.pad_sequence([Z(2), Z(2, dt=np.float64)])"),
    ("pad_sequence_too_long", "F.pad_sequence([Z(3), Z(2)], length=2)"),
    ("transpose_sequence_increasing", "F.transpose_sequence([Z(2), Z(3)])"),
    ("transpose_sequence_shapes", "F.transpose_sequence([Z(3, 2), Z(2, 3)])"),
    ("separate_axis", "F.separate(Z(2, 3), axis=2)"),
    ("separate_axis_neg", "F.separate(Z(2, 3), axis=-3)"),
    ("permutate_float_indices", "F.permutate(Z(3), np.array([0.0, 1.0, 2.0]))"),
    ("permutate_2d_indices", "F.permutate(Z(3), np.array([[0, 1, 2]], np.int32))"),
    ("permutate_axis", "F.permutate(Z(3), np.array([0, 1, 2], np.int32), axis=1)"),
    ("forget_not_callable", "F.forget(1, Z(2))"),
    ("forget_bad_return", "F.forget(lambda a: 1, Z(2))"),
    ("forget_bad_tuple", "F.forget(lambda a: (a, 1), Z(2))"),
    ("crelu_int", "F.crelu(Z(2, 2, dt=np.int32))"),
    ("crelu_axis_type", "F.crelu(Z(2, 2), axis=1.0)"),
    ("crelu_axis", "F.crelu(Z(2, 2), axis=2)"),
    ("gaussian_shapes", "F.gaussian(Z(2), Z(3))"),
    ("gaussian_dtypes", "F.gaussian(Z(2), Z(2, dt=np.float64))"),
    ("gaussian_int", "F.gaussian(Z(2, dt=np.int32), Z(2, dt=np.int32))"),
    ("binary_accuracy_shapes", "F.binary_accuracy(Z(2, 2), Z(4, dt=np.int32))"),
    ("binary_accuracy_float_t", "F.binary_accuracy(Z(2), Z(2))"),
    ("classification_summary_shapes", "F.classification_summary(Z(3, 2), Z(2, dt=np.int32))"),
    (
        "classification_summary_int_y",
        "F.classification_summary(Z(2, 2, dt=np.int32), Z(2, dt=np.int32))",
    ),
    ("r2_score_weight", "F.r2_score(Z(2), Z(2), sample_weight=Z(2))"),
    ("r2_score_multioutput", "F.r2_score(Z(2), Z(2), multioutput='variance_weighted')"),
    ("r2_score_shapes", "F.r2_score(Z(2), Z(3))"),
    ("inv_singular", "F.inv(Z(2, 2))"),
    ("inv_not_square", "F.inv(Z(2, 3))"),
    ("inv_3d", "F.inv(Z(2, 2, 2))"),
    ("inv_int", "F.inv(E(2).astype(np.int32))"),
    ("batch_inv_2d", "F.batch_inv(E(2))"),
    ("batch_inv_singular", "F.batch_inv(Z(2, 2, 2))"),
    ("det_not_square", "F.det(Z(2, 3))"),
    ("batch_det_2d", "F.batch_det(E(2))"),
    ("cholesky_3d", "F.cholesky(Z(2, 2, 2))"),
    ("cholesky_not_pd", "F.cholesky(-E(2))"),
    ("linear_interpolate_dtypes", "F.linear_interpolate(Z(2), Z(2, dt=np.float64), Z(2))"),
    ("linear_interpolate_shapes", "F.linear_interpolate(Z(2), Z(2), Z(3))"),
    ("linear_interpolate_int", "F.linear_interpolate(*[Z(2, dt=np.int32)] * 3)"),
    ("im2col_3d", "F.im2col(Z(1, 2, 3), 2)"),
    ("im2col_int", "F.im2col(Z(1, 1, 3, 3, dt=np.int32), 2)"),
    ("unpooling_1d_ndim", "F.unpooling_1d(Z(1, 1, 2, 2), 2)"),
    ("unpooling_3d_ndim", "F.unpooling_3d(Z(1, 1, 2, 2), 2)"),
    ("unpooling_nd_outsize", "F.unpooling_nd(Z(1, 1, 2), 2, outsize=(7,))"),
    ("unpooling_nd_int", "F.unpooling_nd(Z(1, 1, 2, dt=np.int32), 2)"),
    ("spp_pooling_none", "F.spatial_pyramid_pooling_2d(Z(1, 1, 4, 4), 2)"),
    ("spp_pooling_avg", "F.spatial_pyramid_pooling_2d(Z(1, 1, 4, 4), 2, pooling='average')"),
    ("crf1d_reduce", "F.crf1d(Z(2, 2), [Z(1, 2)], [np.zeros(1, np.int32)], reduce='sum')"),
    ("crf1d_labels", "F.crf1d(Z(3, 3), [Z(1, 2)], [np.zeros(1, np.int32)])"),
    (
        "ctc_not_list",
        "F.connectionist_temporal_classification(Z(2, 1, 3), Z(1, 1, dt=np.int32), 0)",
    ),
    (
        "ctc_blank_type",
        "F.connectionist_temporal_classification([Z(1, 3)], Z(1, 1, dt=np.int32), 0.0)",
    ),
    (
        "ctc_reduce",
        "F.connectionist_temporal_classification([Z(1, 3)], Z(1, 1, dt=np.int32), 0, reduce='sum')",
    ),
    ("ctc_t_int64", "F.connectionist_temporal_classification([Z(1, 3)], Z(1, 1, dt=np.int64), 0)"),
    ("ctc_t_batch", "F.connectionist_temporal_classification([Z(1, 3)], Z(2, 1, dt=np.int32), 0)"),
    (
        "ctc_x_int",
        "F.connectionist_temporal_classification([Z(1, 3, dt=np.int32)], Z(1, 1, dt=np.int32), 0)",
    ),
    (
        "ctc_blank_range",
        "F.connectionist_temporal_classification([Z(1, 3)], Z(1, 1, dt=np.int32), 3)",
    ),
    ("ctc_x_3d", "F.connectionist_temporal_classification([Z(1, 3, 1)], Z(1, 1, dt=np.int32), 0)"),
    ("roi_pooling_2d_rois", "F.roi_pooling_2d(Z(1, 1, 4, 4), Z(1, 4), 2, 2, 1.0)"),
    ("roi_pooling_2d_dtypes", "F.roi_pooling_2d(Z(1, 1, 4, 4), Z(1, 5, dt=np.float64), 2, 2, 1.0)"),
    (
        "roi_max_pooling_2d_outsize",
        "F.roi_max_pooling_2d(Z(1, 1, 4, 4), Z(1, 4), Z(1, dt=np.int32), 0, 1.0)",
    ),
    (
        "roi_max_pooling_2d_scale",
        "F.roi_max_pooling_2d(Z(1, 1, 4, 4), Z(1, 4), Z(1, dt=np.int32), 2, -1.0)",
    ),
    (
        "roi_average_pooling_2d_indices",
        "F.roi_average_pooling_2d(Z(1, 1, 4, 4), Z(1, 4), Z(1), 2, 1.0)",
    ),
    (
        "roi_average_pooling_2d_count",
        "F.roi_average_pooling_2d(Z(1, 1, 4, 4), Z(2, 4), Z(1, dt=np.int32), 2, 1.0)",
    ),
    (
        "roi_average_align_2d_f64",
        "F.roi_average_align_2d(Z(1, 1, 4, 4, dt=np.float64), Z(1, 4, dt=np.float64), Z(1, "
        "dt=np.int32), 2, 1.0)",
    ),
    (
        "roi_average_align_2d_sr",
        "F.roi_average_align_2d(Z(1, 1, 4, 4), Z(1, 4), Z(1, dt=np.int32), 2, 1.0, "
        "sampling_ratio=0)",
    ),
    ("roi_max_align_2d_3d", "F.roi_max_align_2d(Z(1, 4, 4), Z(1, 4), Z(1, dt=np.int32), 2, 1.0)"),
    (
        "batch_renormalization_no_mean",
        "TRAIN(lambda: F.batch_renormalization(Z(2, 3), Z(3), Z(3), 1, 0))",
    ),
    (
        "batch_renormalization_shapes",
        "TRAIN(lambda: F.batch_renormalization(Z(2, 3), Z(2), Z(2), 1, 0, running_mean=Z(2), "
        "running_var=Z(2)))",
    ),
    ("decorrelated_groups", "F.decorrelated_batch_normalization(Z(2, 3), groups=2)"),
    ("decorrelated_int", "F.decorrelated_batch_normalization(Z(2, 2, dt=np.int32), groups=1)"),
    (
        "fixed_decorrelated_dtypes",
        "F.fixed_decorrelated_batch_normalization(Z(2, 2), Z(1, 2, dt=np.float64), Z(1, 2, 2), "
        "groups=1)",
    ),
    ("st_grid_shape", "F.spatial_transformer_grid(Z(1, 3, 3), (2, 2))"),
    ("st_grid_cudnn", "F.spatial_transformer_grid(Z(1, 2, 3), (2, 2), use_cudnn=True)"),
    (
        "st_sampler_dtypes",
        "F.spatial_transformer_sampler(Z(1, 1, 2, 2), Z(1, 2, 1, 1, dt=np.float64))",
    ),
    ("st_sampler_batch", "F.spatial_transformer_sampler(Z(2, 1, 2, 2), Z(1, 2, 1, 1))"),
    ("cross_covariance_reduce", "F.cross_covariance(Z(2, 2), Z(2, 2), reduce='mean')"),
    ("cross_covariance_batch", "F.cross_covariance(Z(2, 2), Z(3, 2))"),
    ("decov_reduce", "F.decov(Z(2, 2), reduce='mean')"),
    ("decov_3d", "F.decov(Z(2, 2, 2))"),
    ("fft_shapes", "F.fft((Z(2), Z(3)))"),
    ("fft_0d", "F.fft((Z(), Z()))"),
    ("shift_even", "F.shift(Z(1, 9, 2, 2), ksize=2)"),
    ("shift_channels", "F.shift(Z(1, 8, 2, 2))"),
    ("zoneout_train", "F.zoneout(Z(2), Z(2), train=True)"),
    ("dropconnect_shapes", "F.simplified_dropconnect(Z(2, 3), Z(4, 2))"),
    ("dropconnect_mask", "F.simplified_dropconnect(Z(2, 3), Z(4, 3), mask=np.ones((4, 3), bool))"),
    ("local_conv_channels", "F.local_convolution_2d(Z(1, 2, 3, 3), Z(1, 2, 2, 3, 2, 2))"),
    ("tree_lstm_one", "F.tree_lstm(Z(2, 3))"),
    ("tree_lstm_gates", "F.tree_lstm(Z(2, 3), Z(2, 10))"),
    (
        "discriminative_norm",
        "F.discriminative_margin_based_clustering_loss(Z(1, 2, 1, 1), Z(1, 1, 1, dt=np.int32), "
        "0.5, 1.5, 2, norm=3)",
    ),
    (
        "discriminative_dim",
        "F.discriminative_margin_based_clustering_loss(Z(1, 2, 1, 1), Z(1, 1, 1, dt=np.int32), "
        "0.5, 1.5, 0)",
    ),
    (
        "negative_sampling_reduce",
        "F.negative_sampling(Z(1, 2), Z(1, dt=np.int32), Z(3, 2), lambda s: np.zeros(s, "
        "np.int32), 1, reduce='mean')",
    ),
    (
        "negative_sampling_t",
        "F.negative_sampling(Z(1, 2), Z(1, dt=np.int64), Z(3, 2), lambda s: np.zeros(s, "
        "np.int32), 1)",
    ),
    ("as_strided_large", "F.as_strided(Z(6), (3, 3), (1, 2), 0)"),
    ("as_strided_negative", "F.as_strided(Z(6), (2,), (-1,), 0)"),
]


def weights(shape: tuple[int, ...], dtype: Any, k: int) -> np.ndarray:
    """The fixed upstream gradients (k=1) and second-order weights (k=2) of the cases."""
    n = int(np.prod(shape))
    return (0.5 + (np.arange(n) % 5) * 0.25 * k).reshape(shape).astype(dtype)


def _zeros(*shape: int, dt: Any = np.float32) -> np.ndarray:
    return np.zeros(shape, dt)


def _eye(n: int) -> np.ndarray:
    return np.eye(n, dtype=np.float32)


def main(path: str) -> None:
    import chainer
    import chainer.functions as F

    def train(fn: Any) -> Any:
        with chainer.using_config("train", True):
            return fn()

    out: dict[str, np.ndarray] = {}
    for name, expr, inputs, diff, seed in CASES:
        vs = {k: chainer.Variable(eval(v, {"np": np})) for k, v in inputs.items()}
        env: dict[str, Any] = {"np": np, "F": F, "TRAIN": train, **vs}
        if seed is not None:
            np.random.seed(seed)
        with chainer.using_config("train", False):
            y = eval(expr, env)
        ys = list(y) if isinstance(y, tuple) else [y]
        out[f"{name}/tuple"] = np.array(isinstance(y, tuple))
        out[f"{name}/n"] = np.array(len(ys))
        for i, v in enumerate(ys):
            out[f"{name}/y{i}"] = np.asarray(v.array if isinstance(v, chainer.Variable) else v)
        if not diff:
            continue
        xs = [vs[k] for k in diff]
        gys = [chainer.Variable(weights(v.shape, v.dtype, 1)) for v in ys]
        mode = expr.startswith("TRAIN(")  # (chainer's batch renormalization asserts it)
        try:
            with chainer.using_config("train", mode):
                gs = chainer.grad(ys, xs, grad_outputs=gys, enable_double_backprop=True)
        except RuntimeError as e:  # F.forget refuses double backprop: first order only
            out[f"{name}/gg_error"] = np.array(type(e).__name__)
            with chainer.using_config("train", mode):
                gs = chainer.grad(ys, xs, grad_outputs=gys)
            for j, g in enumerate(gs):
                if g is not None:
                    out[f"{name}/g{j}"] = g.array
            continue
        for j, g in enumerate(gs):
            if g is not None:
                out[f"{name}/g{j}"] = g.array
        terms = [F.sum(g * weights(g.shape, g.dtype, 2)) for g in gs if g is not None]
        z = terms[0]
        for t in terms[1:]:
            z = z + t
        try:
            with chainer.using_config("train", mode):
                ggs = chainer.grad([z], xs)
        except Exception as e:  # chainer cannot differentiate this gradient
            out[f"{name}/gg_error"] = np.array(type(e).__name__)
            continue
        for j, g in enumerate(ggs):
            if g is not None:
                out[f"{name}/gg{j}"] = g.array
    for name, expr in ERRORS:
        try:
            eval(expr, {"np": np, "F": F, "Z": _zeros, "E": _eye, "TRAIN": train})
            raised = ""
        except Exception as e:
            raised = type(e).__name__
        out[f"error/{name}"] = np.array(raised)
    np.savez(path, **out)  # type: ignore[arg-type]


if __name__ == "__main__":
    import os

    main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "functions_more_reference.npz"))
