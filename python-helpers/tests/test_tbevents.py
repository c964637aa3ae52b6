"""TensorBoard event files written without the tensorboard package: the TFRecord framing and its masked
CRC-32C, and the Event/Summary messages, read back by our reader and decoded by the protobuf library from
the same message definitions TensorBoard uses."""

import math
import struct

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from qat_kernel import tbevents


def test_crc32c_known_values():
    # The CRC-32C check value (RFC 3720 B.4) and the iSCSI test vectors.
    assert tbevents.crc32c(b"123456789") == 0xE3069283
    assert tbevents.crc32c(bytes(32)) == 0x8A9136AA
    assert tbevents.crc32c(b"\xff" * 32) == 0x62A8AB43
    assert tbevents.crc32c(bytes(range(32))) == 0x46DD794E


def test_masked_crc_of_an_empty_record():
    # TFRecord's mask: rotate right by 15, add 0xa282ead8 (crc32c(b"") is 0).
    assert tbevents.masked_crc32c(b"") == 0xA282EAD8
    crc = tbevents.crc32c(b"abc")
    assert tbevents.masked_crc32c(b"abc") == ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def _event_class():
    """Event/Summary/Value as tensorflow/core/util/event.proto and framework/summary.proto declare them
    (the fields the writer uses, same numbers and types)."""
    f = descriptor_pb2.FileDescriptorProto(name="tb_event_test.proto", package="tbtest", syntax="proto3")
    fd = descriptor_pb2.FieldDescriptorProto
    value = f.message_type.add(name="Value")
    value.field.add(name="tag", number=1, type=fd.TYPE_STRING, label=fd.LABEL_OPTIONAL)
    value.field.add(name="simple_value", number=2, type=fd.TYPE_FLOAT, label=fd.LABEL_OPTIONAL)
    summary = f.message_type.add(name="Summary")
    summary.field.add(name="value", number=1, type=fd.TYPE_MESSAGE, type_name=".tbtest.Value", label=fd.LABEL_REPEATED)
    event = f.message_type.add(name="Event")
    event.field.add(name="wall_time", number=1, type=fd.TYPE_DOUBLE, label=fd.LABEL_OPTIONAL)
    event.field.add(name="step", number=2, type=fd.TYPE_INT64, label=fd.LABEL_OPTIONAL)
    event.field.add(name="file_version", number=3, type=fd.TYPE_STRING, label=fd.LABEL_OPTIONAL)
    event.field.add(
        name="summary", number=5, type=fd.TYPE_MESSAGE, type_name=".tbtest.Summary", label=fd.LABEL_OPTIONAL
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("tbtest.Event"))


def test_written_file_reads_back_with_valid_crcs(tmp_path):
    with tbevents.EventWriter(tmp_path / "run") as w:
        w.add_scalars(1, {"train/loss": 2.5, "accuracy/fake_quant": 0.75}, wall_time=1000.5)
        w.add_scalars(300, {"train/loss": 0.125}, wall_time=1001.0)
        w.add_scalars(2**40, {"big": -1.0})
        w.add_scalars(4, {})  # nothing to write
    assert w.path.parent == tmp_path / "run"
    assert w.path.name.startswith("events.out.tfevents.")
    events = tbevents.read_events(w.path)
    assert events[0]["file_version"] == "brain.Event:2"
    assert [e["step"] for e in events[1:]] == [1, 300, 2**40]
    assert events[1] == {"wall_time": 1000.5, "step": 1, "scalars": {"train/loss": 2.5, "accuracy/fake_quant": 0.75}}
    assert events[2]["scalars"] == {"train/loss": 0.125}

    # The protobuf library decodes the same bytes into the same figures.
    event_cls = _event_class()
    decoded = []
    for record in tbevents.read_records(w.path):
        e = event_cls()
        e.ParseFromString(record)
        decoded.append(e)
    assert decoded[0].file_version == "brain.Event:2"
    assert decoded[1].wall_time == 1000.5 and decoded[1].step == 1
    assert {v.tag: v.simple_value for v in decoded[1].summary.value} == {"train/loss": 2.5, "accuracy/fake_quant": 0.75}
    assert decoded[3].step == 2**40


def test_the_writer_encodes_what_protobuf_encodes():
    event_cls = _event_class()
    e = event_cls(wall_time=12.25, step=7)
    e.summary.value.add(tag="a/b", simple_value=0.5)
    assert tbevents.encode_event(12.25, 7, scalars=[("a/b", 0.5)]) == e.SerializeToString()
    header = event_cls(wall_time=3.0, file_version="brain.Event:2")
    assert tbevents.encode_event(3.0, 0, file_version="brain.Event:2") == header.SerializeToString()


def test_non_finite_values_survive(tmp_path):
    with tbevents.EventWriter(tmp_path) as w:
        w.add_scalars(1, {"nan": math.nan, "inf": math.inf})
    scalars = tbevents.read_events(w.path)[1]["scalars"]
    assert math.isnan(scalars["nan"]) and scalars["inf"] == math.inf


def test_a_flipped_byte_or_a_cut_file_is_reported(tmp_path):
    with tbevents.EventWriter(tmp_path) as w:
        w.add_scalars(1, {"x": 1.0})
    data = bytearray(w.path.read_bytes())
    flipped = tmp_path / "flipped"
    data[-6] ^= 0x01  # inside the last record's payload
    flipped.write_bytes(bytes(data))
    with pytest.raises(tbevents.CorruptEventFile, match="record CRC mismatch"):
        tbevents.read_records(flipped)
    cut = tmp_path / "cut"
    cut.write_bytes(w.path.read_bytes()[:-3])
    with pytest.raises(tbevents.CorruptEventFile, match="truncated"):
        tbevents.read_records(cut)
    bad_length = tmp_path / "bad_length"
    raw = bytearray(w.path.read_bytes())
    raw[0:8] = struct.pack("<Q", 999)
    bad_length.write_bytes(bytes(raw))
    with pytest.raises(tbevents.CorruptEventFile, match="length CRC mismatch"):
        tbevents.read_records(bad_length)


def test_a_summary_value_that_is_not_a_message_is_reported():
    # wall_time (field 1, fixed64), then a Summary (field 5) whose Value (field 1) is the varint 7
    record = b"\x09" + struct.pack("<d", 0.0) + b"\x2a\x02" + b"\x08\x07"
    with pytest.raises(tbevents.CorruptEventFile, match="wire type 0"):
        tbevents.decode_event(record)
