"""nnabla.utils.image_utils.imread / imresize (Pillow, as nnabla 1.39's Pillow backend) and
imsave(..., as_uint16=True) (16-bit PNG, as nnabla 1.39's pypng backend): nnabla's outputs on the
same images, Pillow's own resampling where its result depends on Pillow's version, and the
errors nnabla raises."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("PIL", reason="imread/imresize need Pillow (the extra 'images')")

from gradhub_compat.nnabla.utils.image_utils import imread, imresize, imsave
from PIL import Image

# nnabla 1.39 with nnabla.utils.image_utils.set_backend("PilBackend") (Pillow 12.3), on the images
# of _images() (/tmp/probe_D/img_nn.py): name -> (dtype, shape, values)
_NNABLA: dict[str, tuple[str, tuple[int, ...], list[Any]]] = {
    "g16_read_pil": (
        "uint8",
        (5, 7),
        [
            239,
            3,
            234,
            204,
            230,
            35,
            214,
            254,
            189,
            197,
            215,
            43,
            32,
            11,
            104,
            212,
            138,
            182,
            235,
            165,
            125,
            156,
            111,
            232,
            2,
            27,
            211,
            217,
            151,
            53,
            51,
            174,
            148,
            181,
            29,
        ],
    ),
    "g8_c4": (
        "uint8",
        (5, 7, 4),
        [
            83,
            83,
            83,
            255,
            161,
            161,
            161,
            255,
            104,
            104,
            104,
            255,
            160,
            160,
            160,
            255,
            228,
            228,
            228,
            255,
            251,
            251,
            251,
            255,
            251,
            251,
            251,
            255,
            121,
            121,
            121,
            255,
            70,
            70,
            70,
            255,
            213,
            213,
            213,
            255,
            31,
            31,
            31,
            255,
            13,
            13,
            13,
            255,
            71,
            71,
            71,
            255,
            184,
            184,
            184,
            255,
            152,
            152,
            152,
            255,
            79,
            79,
            79,
            255,
            41,
            41,
            41,
            255,
            18,
            18,
            18,
            255,
            40,
            40,
            40,
            255,
            182,
            182,
            182,
            255,
            207,
            207,
            207,
            255,
            11,
            11,
            11,
            255,
            166,
            166,
            166,
            255,
            111,
            111,
            111,
            255,
            93,
            93,
            93,
            255,
            249,
            249,
            249,
            255,
            129,
            129,
            129,
            255,
            223,
            223,
            223,
            255,
            118,
            118,
            118,
            255,
            44,
            44,
            44,
            255,
            216,
            216,
            216,
            255,
            125,
            125,
            125,
            255,
            24,
            24,
            24,
            255,
            67,
            67,
            67,
            255,
            210,
            210,
            210,
            255,
        ],
    ),
    "rgb_gray": (
        "uint8",
        (5, 7),
        [
            92,
            125,
            120,
            103,
            70,
            132,
            157,
            83,
            93,
            61,
            103,
            227,
            142,
            117,
            196,
            112,
            144,
            84,
            60,
            221,
            221,
            145,
            100,
            95,
            175,
            67,
            77,
            80,
            174,
            49,
            62,
            93,
            107,
            132,
            152,
        ],
    ),
    "rgb_size_box": (
        "uint8",
        (9, 4, 3),
        [
            182,
            57,
            184,
            203,
            62,
            126,
            36,
            87,
            70,
            137,
            141,
            185,
            182,
            57,
            184,
            203,
            62,
            126,
            36,
            87,
            70,
            137,
            141,
            185,
            64,
            84,
            170,
            17,
            113,
            94,
            208,
            243,
            197,
            223,
            81,
            137,
            64,
            84,
            170,
            17,
            113,
            94,
            208,
            243,
            197,
            223,
            81,
            137,
            123,
            162,
            195,
            168,
            88,
            109,
            127,
            32,
            31,
            183,
            249,
            177,
            74,
            156,
            78,
            101,
            143,
            189,
            17,
            79,
            132,
            68,
            81,
            94,
            74,
            156,
            78,
            101,
            143,
            189,
            17,
            79,
            132,
            68,
            81,
            94,
            61,
            133,
            136,
            101,
            51,
            151,
            142,
            99,
            53,
            112,
            162,
            119,
            61,
            133,
            136,
            101,
            51,
            151,
            142,
            99,
            53,
            112,
            162,
            119,
        ],
    ),
    "rgba_gray3": (
        "uint8",
        (5, 7, 3),
        [
            122,
            122,
            122,
            173,
            173,
            173,
            199,
            199,
            199,
            199,
            199,
            199,
            158,
            158,
            158,
            51,
            51,
            51,
            172,
            172,
            172,
            41,
            41,
            41,
            111,
            111,
            111,
            101,
            101,
            101,
            186,
            186,
            186,
            54,
            54,
            54,
            137,
            137,
            137,
            146,
            146,
            146,
            140,
            140,
            140,
            126,
            126,
            126,
            173,
            173,
            173,
            35,
            35,
            35,
            26,
            26,
            26,
            38,
            38,
            38,
            63,
            63,
            63,
            42,
            42,
            42,
            164,
            164,
            164,
            43,
            43,
            43,
            13,
            13,
            13,
            52,
            52,
            52,
            44,
            44,
            44,
            188,
            188,
            188,
            166,
            166,
            166,
            53,
            53,
            53,
            199,
            199,
            199,
            109,
            109,
            109,
            112,
            112,
            112,
            71,
            71,
            71,
            119,
            119,
            119,
        ],
    ),
    "rs_1px": (
        "uint8",
        (2, 3, 3),
        [172, 47, 117, 172, 47, 117, 172, 47, 117, 172, 47, 117, 172, 47, 117, 172, 47, 117],
    ),
    "rs_f32_bilinear": (
        "float32",
        (8, 3, 3),
        [
            0.53512,
            0.16848,
            0.6879,
            0.55339,
            0.57865,
            0.59872,
            0.8053,
            0.72667,
            0.22283,
            0.4167,
            0.2814,
            0.51612,
            0.54811,
            0.46468,
            0.54452,
            0.64764,
            0.56589,
            0.33658,
            0.28011,
            0.43533,
            0.31586,
            0.53653,
            0.3168,
            0.48069,
            0.46362,
            0.36851,
            0.47697,
            0.43684,
            0.52287,
            0.52186,
            0.48862,
            0.30326,
            0.53933,
            0.65053,
            0.46197,
            0.4185,
            0.64615,
            0.54208,
            0.67682,
            0.50059,
            0.32573,
            0.55159,
            0.6033,
            0.59287,
            0.37021,
            0.90803,
            0.49297,
            0.78076,
            0.57244,
            0.3842,
            0.51747,
            0.32194,
            0.76123,
            0.33209,
            0.82856,
            0.58643,
            0.63757,
            0.4388,
            0.43218,
            0.45547,
            0.16324,
            0.55061,
            0.40151,
            0.74639,
            0.66295,
            0.51812,
            0.32926,
            0.46495,
            0.4099,
            0.06169,
            0.3737,
            0.45848,
        ],
    ),
    "rs_f32_hamming": (
        "float32",
        (8, 3, 3),
        [
            0.5489,
            0.14166,
            0.70039,
            0.57427,
            0.60529,
            0.63547,
            0.86487,
            0.71807,
            0.22645,
            0.43925,
            0.24896,
            0.54572,
            0.57877,
            0.49641,
            0.587,
            0.7277,
            0.57464,
            0.31751,
            0.24334,
            0.44282,
            0.26993,
            0.58601,
            0.30041,
            0.50046,
            0.4826,
            0.3176,
            0.48081,
            0.42574,
            0.57323,
            0.60798,
            0.46304,
            0.27336,
            0.59115,
            0.70959,
            0.44536,
            0.41427,
            0.5234,
            0.58385,
            0.67964,
            0.46063,
            0.2764,
            0.59113,
            0.68641,
            0.50631,
            0.39089,
            0.93775,
            0.51836,
            0.77948,
            0.56886,
            0.32206,
            0.50036,
            0.31776,
            0.75098,
            0.31454,
            0.80748,
            0.60993,
            0.63291,
            0.39337,
            0.38501,
            0.42221,
            0.14658,
            0.53835,
            0.38287,
            0.73343,
            0.66111,
            0.55102,
            0.29536,
            0.41984,
            0.3791,
            0.0528,
            0.41916,
            0.42117,
        ],
    ),
    "rs_f64_lanczos": (
        "float32",
        (8, 3),
        [
            0.38831,
            0.77488,
            0.28113,
            0.26826,
            0.66187,
            0.3711,
            0.16256,
            0.49077,
            0.58429,
            0.2916,
            0.44533,
            0.79293,
            0.40107,
            0.43318,
            0.62379,
            0.3859,
            0.3881,
            0.31737,
            0.37433,
            0.35857,
            0.4997,
            0.37061,
            0.34833,
            0.73842,
        ],
    ),
    "rs_g16_bicubic": (
        "uint16",
        (8, 3),
        [
            32018,
            29550,
            17676,
            37878,
            21220,
            20539,
            41407,
            13939,
            26451,
            19921,
            32286,
            35810,
            20431,
            38736,
            38683,
            43313,
            30158,
            34626,
            44592,
            21915,
            31012,
            42033,
            16974,
            28876,
        ],
    ),
    "rs_rgb_nearest": (
        "uint8",
        (4, 9, 3),
        [
            172,
            47,
            117,
            192,
            67,
            251,
            192,
            67,
            251,
            195,
            103,
            9,
            211,
            21,
            242,
            36,
            87,
            70,
            216,
            88,
            140,
            216,
            88,
            140,
            58,
            193,
            230,
            39,
            87,
            174,
            88,
            81,
            165,
            88,
            81,
            165,
            25,
            77,
            72,
            9,
            148,
            115,
            208,
            243,
            197,
            254,
            79,
            175,
            254,
            79,
            175,
            192,
            82,
            99,
            114,
            183,
            28,
            34,
            128,
            128,
            34,
            128,
            128,
            164,
            53,
            133,
            38,
            232,
            244,
            17,
            79,
            132,
            105,
            42,
            186,
            105,
            42,
            186,
            31,
            120,
            1,
            65,
            231,
            169,
            57,
            35,
            102,
            57,
            35,
            102,
            119,
            11,
            174,
            82,
            91,
            128,
            142,
            99,
            53,
            140,
            121,
            170,
            140,
            121,
            170,
            84,
            203,
            68,
        ],
    ),
}


def _ref(name: str) -> np.ndarray:
    dtype, shape, values = _NNABLA[name]
    return np.asarray(values, np.float64).reshape(shape).astype(dtype)


def _images() -> dict[str, np.ndarray]:
    rng = np.random.RandomState(0)
    out = {
        "rgb": rng.randint(0, 256, (5, 7, 3)).astype(np.uint8),
        "rgba": rng.randint(0, 256, (5, 7, 4)).astype(np.uint8),
        "g8": rng.randint(0, 256, (5, 7)).astype(np.uint8),
        "g16": rng.randint(0, 65536, (5, 7)).astype(np.uint16),
        "rgb16": rng.randint(0, 65536, (5, 7, 3)).astype(np.uint16),
    }
    out["f32"] = rng.rand(5, 7, 3).astype(np.float32)
    out["f64"] = rng.rand(5, 7).astype(np.float64)
    return out


def _png(path: Path) -> tuple[tuple[int, ...], np.ndarray]:
    """(IHDR fields, pixels) of a PNG written with filter 0 on every row (8 or 16 bits)."""
    data = path.read_bytes()
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert header is not None
    w, h, depth, colour = header[:4]
    c = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, -1)
    assert (raw[:, 0] == 0).all()
    dt = np.dtype(">u2") if depth == 16 else np.dtype(np.uint8)
    px = np.frombuffer(raw[:, 1:].tobytes(), dt).reshape(h, w, c)
    return header, (px[..., 0] if c == 1 else px).astype(dt.newbyteorder("="))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    imgs = _images()
    out = {}
    for name in ("rgb", "rgba", "g8"):
        p = tmp_path / f"{name}.png"
        Image.fromarray(imgs[name]).save(p)  # (as nnabla's Pillow backend writes them)
        out[name] = str(p)
    return out


def test_imread_as_nnabla(files: dict[str, str]) -> None:
    imgs = _images()
    for name in ("rgb", "rgba", "g8"):
        got = imread(files[name])
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got, imgs[name])
        cf = imread(files[name], channel_first=True)
        want_cf = imgs[name].transpose(2, 0, 1) if imgs[name].ndim == 3 else imgs[name]
        np.testing.assert_array_equal(cf, want_cf)
    np.testing.assert_array_equal(imread(files["rgb"], grayscale=True), _ref("rgb_gray"))
    np.testing.assert_array_equal(
        imread(files["rgba"], grayscale=True, num_channels=3), _ref("rgba_gray3")
    )
    np.testing.assert_array_equal(imread(files["g8"], num_channels=4), _ref("g8_c4"))
    np.testing.assert_array_equal(imread(files["rgba"], num_channels=3), imgs["rgba"][..., :3])
    c4 = imread(files["rgb"], num_channels=4)
    np.testing.assert_array_equal(c4[..., :3], imgs["rgb"])
    assert (c4[..., 3] == 255).all()
    np.testing.assert_array_equal(
        imread(files["rgb"], size=(4, 9), interpolate="box"), _ref("rgb_size_box")
    )


def test_imread_reads_file_objects_and_palettes(tmp_path: Path) -> None:
    imgs = _images()
    p = tmp_path / "p.png"
    Image.fromarray(imgs["rgb"]).convert("P", palette=Image.Palette.ADAPTIVE).save(p)
    pal = Image.open(p)
    want = np.asarray(pal.convert("RGB"))
    pal.close()
    np.testing.assert_array_equal(imread(str(p)), want)
    assert imread(str(p), return_palette_indices=True).ndim == 2
    with open(p, "rb") as f:
        np.testing.assert_array_equal(imread(f), want)


def test_imresize_as_nnabla() -> None:
    imgs = _images()
    rgb = imgs["rgb"]
    np.testing.assert_array_equal(
        imresize(rgb, (9, 4), interpolate="nearest"), _ref("rs_rgb_nearest")
    )
    for interp in ("bilinear", "hamming"):
        got = imresize(imgs["f32"], (3, 8), interpolate=interp)
        assert got.dtype == np.float32 and got.shape == (8, 3, 3)
        np.testing.assert_allclose(got, _ref(f"rs_f32_{interp}"), atol=1e-5)
    got = imresize(imgs["f64"], [3, 8], interpolate="lanczos")
    assert got.dtype == np.float32  # float64 input comes back as float32, as nnabla's
    np.testing.assert_allclose(got, _ref("rs_f64_lanczos"), atol=1e-5)
    got = imresize(imgs["g16"], (3, 8), interpolate="bicubic")
    assert got.dtype == np.uint16
    np.testing.assert_array_equal(got, _ref("rs_g16_bicubic"))
    np.testing.assert_array_equal(imresize(rgb[:1, :1], (3, 2)), _ref("rs_1px"))


@pytest.mark.parametrize("interp", ["bilinear", "bicubic", "box", "hamming", "lanczos"])
def test_imresize_uint8_is_pillows_resize(interp: str) -> None:
    # uint8 images go through Pillow's own resampling, whose rounding differs between Pillow
    # versions (12.3 and 13.0 differ by up to 8 grey levels with lanczos): compared with it
    imgs = _images()
    resample = getattr(Image.Resampling, interp.upper())
    want = np.asarray(Image.fromarray(imgs["rgb"]).resize((9, 4), resample=resample))
    np.testing.assert_array_equal(imresize(imgs["rgb"], (9, 4), interpolate=interp), want)
    cf = imresize(imgs["rgb"].transpose(2, 0, 1), (9, 4), interpolate=interp, channel_first=True)
    np.testing.assert_array_equal(cf, want.transpose(2, 0, 1))
    g = imgs["g8"][..., None]
    want1 = np.asarray(Image.fromarray(imgs["g8"]).resize((9, 4), resample=resample))
    np.testing.assert_array_equal(imresize(g, (9, 4), interpolate=interp), want1[..., None])


def test_sixteen_bit_files(tmp_path: Path) -> None:
    imgs = _images()
    p = tmp_path / "g16.png"
    imsave(str(p), imgs["g16"], as_uint16=True)
    header, px = _png(p)
    assert header[2:4] == (16, 0)  # nnabla 1.39 (pypng): 16 bits, grey
    np.testing.assert_array_equal(px, imgs["g16"])
    np.testing.assert_array_equal(imread(str(p), as_uint16=True), imgs["g16"])
    np.testing.assert_array_equal(imread(str(p)), _ref("g16_read_pil"))  # the low bytes
    p3 = tmp_path / "rgb16.png"
    imsave(str(p3), imgs["rgb16"], as_uint16=True)
    header, px = _png(p3)
    assert header[2:4] == (16, 2)  # nnabla 1.39 (pypng): 16 bits, RGB
    np.testing.assert_array_equal(px, imgs["rgb16"])
    with pytest.raises(NotImplementedError, match="16-bit colour"):
        imread(str(p3), as_uint16=True)
    # the scaling of nnabla's pypng backend: uint8 * 256, float * 65535, no scaling: a cast
    f = np.linspace(0, 1, 35).reshape(5, 7)
    for name, img, kw, want in (
        ("u8", imgs["g8"], {}, imgs["g8"].astype(np.uint16) * 256),
        ("f", f, {}, (f.astype(np.float32) * 65535).astype(np.uint16)),
        ("raw", imgs["g8"], {"auto_scale": False}, imgs["g8"].astype(np.uint16)),
    ):
        q = tmp_path / f"{name}.png"
        imsave(str(q), img, as_uint16=True, **kw)
        np.testing.assert_array_equal(_png(q)[1], want)
    # an 8-bit file read as uint16: times 256, as nnabla's pypng backend
    q = tmp_path / "u8.png"
    Image.fromarray(imgs["g8"]).save(q)
    np.testing.assert_array_equal(
        imread(str(q), as_uint16=True), imgs["g8"].astype(np.uint16) * 256
    )


def test_errors_as_nnabla(tmp_path: Path, files: dict[str, str]) -> None:
    imgs = _images()
    with pytest.raises(ValueError, match="num_channels"):
        imread(files["rgb"], num_channels=1)  # nnabla 1.39: ValueError (grayscale=False)
    with pytest.raises(ValueError, match="num_channels"):
        imread(files["rgb"], num_channels=2)
    with pytest.raises(ValueError, match="unknown interpolation type 'area'"):
        imresize(imgs["rgb"], (3, 3), interpolate="area")
    with pytest.raises(ValueError, match="size must be a list or a tuple"):
        imresize(imgs["rgb"], 3)
    with pytest.raises(ValueError, match="dimension"):
        imresize(np.zeros((2, 2, 2, 2), np.uint8), (3, 3))
    # nnabla 1.39: a uint16 image without as_uint16 is refused (ValueError)
    with pytest.raises(ValueError, match="as_uint16 is False"):
        imsave(str(tmp_path / "x.png"), imgs["g16"])
    with pytest.raises(ValueError, match="grey or RGB"):
        imsave(str(tmp_path / "x.png"), imgs["rgba"], as_uint16=True)


def test_missing_pillow_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, files: dict[str, str]
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match=r"gradhub-compat\[images\]"):
        imread(files["rgb"])
    with pytest.raises(ImportError, match=r"gradhub-compat\[images\]"):
        imresize(_images()["rgb"], (2, 2))


def test_nnabla_aliases() -> None:
    from gradhub_compat.nnabla.utils import image_utils

    assert image_utils.imwrite is imsave and image_utils.imload is imread
