"""Helpers of fields_client.py and fields_server.py: AMQP values as plain
JSON, their types kept ("sym:x", "str:x", "long:7", ...), so that the Go
test compares what Qpid Proton read with what the engine sent."""

from proton import Array, Data, Described, symbol, ulong


def plain(v):
    """v, a value Proton decoded, as JSON with its AMQP type in each leaf."""
    if v is None:
        return None
    if isinstance(v, symbol):
        return 'sym:' + v
    if isinstance(v, str):
        return 'str:' + v
    if isinstance(v, bool):
        return 'bool:%s' % v
    if isinstance(v, ulong):
        return 'ulong:%d' % v
    if isinstance(v, int):
        return 'long:%d' % v
    if isinstance(v, Described):
        return {'descriptor': plain(v.descriptor), 'value': plain(v.value)}
    if isinstance(v, Array):
        return [plain(e) for e in v.elements]
    if isinstance(v, (list, tuple)):
        return [plain(e) for e in v]
    if isinstance(v, dict):
        return {plain(k): plain(x) for k, x in v.items()}
    return 'other:%r' % (v,)


def data(d):
    """The value a proton Data holds (a terminus's filter or properties)."""
    if d is None:
        return None
    d.rewind()
    if not d.next():
        return None
    return plain(d.get_object())


def put_symbols(d, syms):
    """Put an array of symbols into the proton Data d."""
    d.put_array(False, Data.SYMBOL)
    d.enter()
    for s in syms:
        d.put_symbol(symbol(s))
    d.exit()
