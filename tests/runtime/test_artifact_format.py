"""The ``.fusec`` container (`fusec.runtime.artifact_format`): what is written reads back, the
same content gives the same bytes, and a file that is not an intact artifact (empty,
truncated anywhere, a byte changed anywhere, another format version, a directory) is one
`ArtifactError` line naming the file, before anything in it is used (a blob's bytes only
once its checksum, computed in the background, has been seen to match)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fusec.runtime import artifact_format
from fusec.runtime.artifact_format import MAGIC, ArtifactError, encode, read


def sample() -> bytes:
    arrays = {"w": np.arange(12, dtype=np.float32).reshape(3, 4),
              "ids": np.array([1, -2, 3], np.int32), "empty": np.zeros((0, 5), np.float16)}
    return encode({"name": "sample", "n": 3}, {"binary": b"\x7fELF" + bytes(range(200))},
                  arrays)


def write(tmp_path: Path, data: bytes, name: str = "a.fusec") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_round_trip(tmp_path: Path) -> None:
    art = read(write(tmp_path, sample()))
    assert art.manifest["name"] == "sample" and art.manifest["n"] == 3
    np.testing.assert_array_equal(art.array("w"), np.arange(12, dtype=np.float32).reshape(3, 4))
    assert art.array("ids").dtype == np.int32 and art.array("empty").shape == (0, 5)
    assert bytes(art.blob("binary")) == b"\x7fELF" + bytes(range(200))
    # blobs lie at page boundaries of the file, so a mapped array is aligned for the device
    assert all(b["offset"] % 4096 == 0 for b in art.manifest["blobs"].values())


def test_same_content_same_bytes() -> None:
    assert sample() == sample()


def test_no_objects() -> None:
    with pytest.raises(TypeError, match="Python objects"):
        encode({}, {}, {"o": np.array([object()])})


def damaged_variants(data: bytes) -> dict[str, bytes]:
    """Name -> a damaged copy of `data`: truncations at several points, one byte changed in
    each part of the file, bytes appended."""
    manifest_end = len(MAGIC) + artifact_format.HEADER.size + int.from_bytes(
        data[len(MAGIC) + 4:len(MAGIC) + 12], "little")
    blobs = json.loads(data[len(MAGIC) + artifact_format.HEADER.size:manifest_end])["blobs"]
    binary, w = blobs["binary"], blobs["w"]

    def flip(at: int) -> bytes:
        return data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1:]

    return {
        "empty": b"",
        "cut in the magic": data[:5],
        "cut in the header": data[:len(MAGIC) + 7],
        "cut in the manifest": data[:manifest_end - 10],
        "cut in the padding": data[:manifest_end + 3],
        "cut in a blob": data[:w["offset"] + 7],
        "last byte missing": data[:-1],
        "wrong magic": b"PK\x03\x04" + data[4:],
        "text": b"func.func @f() {\n}\n",
        "format version": flip(len(MAGIC)),
        "manifest length": flip(len(MAGIC) + 4),
        "manifest checksum": flip(len(MAGIC) + 20),
        "manifest byte": flip(manifest_end - 20),
        "padding byte": flip(manifest_end + 1),
        "binary byte": flip(binary["offset"] + 3),
        "array byte": flip(w["offset"] + w["nbytes"] - 1),
        "bytes appended": data + b"\0" * 4,
    }


@pytest.mark.parametrize("name", list(damaged_variants(sample())))
def test_damaged_file_is_one_error_line(tmp_path: Path, name: str) -> None:
    path = write(tmp_path, damaged_variants(sample())[name])
    with pytest.raises(ArtifactError) as caught:
        read(path).check()
    message = str(caught.value)
    assert message.startswith(f"{path}: error: ") and "\n" not in message


def test_a_flipped_byte_anywhere_is_found() -> None:
    """Every byte of the header and manifest, and every 7th byte after them, flipped: the file
    is refused by `read` or by the check of the blob the byte is in."""
    data = sample()
    manifest_end = len(MAGIC) + artifact_format.HEADER.size + int.from_bytes(
        data[len(MAGIC) + 4:len(MAGIC) + 12], "little")
    for at in [*range(manifest_end), *range(manifest_end, len(data), 7)]:
        damaged = bytearray(data)
        damaged[at] ^= 0x01
        with pytest.raises(ArtifactError):
            artifact_format.decode(memoryview(bytes(damaged)), "a.fusec").check()


def test_a_damaged_blob_is_refused_when_read(tmp_path: Path) -> None:
    """`read` returns while the blobs are checked in the background; a damaged blob's bytes
    are never handed out (`blob`, `array`), the others are."""
    data = bytearray(sample())
    w = json.loads(data[len(MAGIC) + artifact_format.HEADER.size:].split(b"\0", 1)[0])[
        "blobs"]["w"]
    data[w["offset"] + 5] ^= 0x80
    art = read(write(tmp_path, bytes(data)))
    assert bytes(art.blob("binary")) == b"\x7fELF" + bytes(range(200))
    for get in (art.array, art.blob, lambda name: art.check()):
        with pytest.raises(ArtifactError, match="the checksum of blob 'w' does not match"):
            get("w")


def test_directory_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="is a directory"):
        read(str(tmp_path))
    with pytest.raises(ArtifactError, match="cannot read: No such file"):
        read(str(tmp_path / "missing.fusec"))


def test_array_description_is_checked(tmp_path: Path) -> None:
    """A manifest (intact checksum) whose array description does not fit its blob, or names
    an object dtype, is refused: nothing is unpickled."""
    for dtype, shape in (("|O", [3]), ("<f4", [5, 5])):
        data = encode({}, {}, {"a": np.zeros(3, np.float64)})
        art = read(write(tmp_path, data))
        art.manifest["arrays"]["a"] = {"dtype": dtype, "shape": shape}
        with pytest.raises(ArtifactError, match="array 'a'"):
            art.array("a")
