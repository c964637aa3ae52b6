"""Process-level behaviour: exit codes, EOF, framing errors, protocol folder override."""

from rpc_client import KernelClient


def test_exit_on_eof():
    client = KernelClient()
    client.proc.stdin.close()
    assert client.proc.wait(timeout=30) == 0
    client.close()


def test_exit_without_shutdown_is_code_1():
    client = KernelClient()
    client.notify("exit")
    assert client.proc.wait(timeout=30) == 1
    client.close()


def test_parse_error_then_keep_serving():
    client = KernelClient()
    try:
        client.proc.stdin.write(b"Content-Length: 5\r\n\r\n{oops")
        client.proc.stdin.flush()
        assert client.request("shutdown", timeout=30) is None
        client.notify("exit")
        assert client.proc.wait(timeout=30) == 0
    finally:
        client.close()


def test_protocol_dir_override(monkeypatch, tmp_path):
    from qat_kernel.rpc import protocol

    monkeypatch.setenv(protocol.ENV_VAR, str(tmp_path))
    assert protocol.protocol_dir() == tmp_path
    monkeypatch.delenv(protocol.ENV_VAR)
    assert (protocol.protocol_dir() / "kernel-rpc.schema.json").is_file()


def test_a_cancelled_request_that_fails_with_a_protocol_error_replies_with_it():
    import io

    from qat_kernel.rpc import errors
    from qat_kernel.rpc.context import RequestContext
    from qat_kernel.rpc.framing import MessageWriter
    from qat_kernel.rpc.server import Server

    def bad_params(ctx):
        ctx.cancel()  # the client's $/cancelRequest arrives while the method runs
        raise errors.ProtocolError(errors.INVALID_PARAMS, "params.samples: not an integer")

    server = Server(io.BytesIO(), MessageWriter(io.BytesIO()), {"test/badParams": bad_params})
    ctx = RequestContext(7, "test/badParams", {}, lambda method, params: None)
    assert server._outcome(ctx) == (None, {"code": errors.INVALID_PARAMS, "message": "params.samples: not an integer"})
