"""The seed's salted word count, as two keyed operators: a running count per salted word, and
the downstream sum of the partials -- beside a sum that is right.

The seed's pipeline (Flink's Scala API)::

    .keyingBy(saltedWord).reduceWith((saltedWord, acc + 1))     // RunningCount
    .mapWith((saltedWord.split("-").head, count))                // unsalt (chained here)
    .keyingBy(word).reduceWith((word, total + partialSum))       // SumOfPartials

Flink's ``reduce`` emits its running aggregate after every record, so ``total + partialSum``
adds up ``1 + 2 + ... + n`` for a sub-key of ``n`` records. :mod:`skewlab.experiments.salting`
measures it.

Example::

    >>> PairSerializer.loads(PairSerializer.dumps((3, 7)))
    (3, 7)
"""

from __future__ import annotations

import struct
import time

from skewlab.engine.routing import KEY_GROUP
from skewlab.operators.stateful import StatefulOperator

__all__ = ["SALT", "SALTED_KEY", "PairSerializer", "RunningCount", "SumOfPartials"]

#: the columns salting adds: the salt, and the salted key
SALT, SALTED_KEY = "_salt", "_salted_key"


class PairSerializer:
    """Two signed 64-bit integers, e.g. ``(salt, running count)`` (what travels downstream)."""

    _format = struct.Struct("<qq")

    @classmethod
    def dumps(cls, value: tuple[int, int]) -> bytes:
        return cls._format.pack(*value)

    @classmethod
    def loads(cls, data: bytes) -> tuple[int, int]:
        return cls._format.unpack(data)


class RunningCount(StatefulOperator):
    """Stage 1 of the seed's word count: ``keyBy(saltedWord) -> reduce(acc + 1)``.

    Per record: read the sub-key's count, add one, write it back and emit the *running* count
    downstream as ``(word, (salt, count))`` -- Flink's ``reduce`` emits after every record.
    """

    columns = (SALTED_KEY, "tweet_id", SALT, KEY_GROUP, "seq")

    def process(self, cols, n, arrivals) -> None:
        keys, words, salts = cols[SALTED_KEY], cols["tweet_id"], cols[SALT]
        groups, seqs = cols[KEY_GROUP], cols["seq"]
        get, put, emit = self.state.get, self.state.put, self.ctx.output.emit
        clock = time.time_ns
        for i in range(n):
            key = keys[i]
            if key is None:
                self.ctx.metrics.records_rejected += 1
                continue
            arrival = clock() if arrivals is None else int(arrivals[i])
            count = (get(groups[i], key) or 0) + 1
            put(groups[i], key, count)
            emit(words[i], (salts[i], count), arrival, seqs[i])


class SumOfPartials(StatefulOperator):
    """Stage 2: ``keyBy(word) -> reduce(total + partialSum)``, beside a correct variant.

    The state of a word holds the seed's ``total`` (every running partial added: wrong) and
    the latest running count of each sub-key (their sum is right: a newer running count
    *replaces* the older one instead of adding to it). Emits ``(seed_total, fixed_total)``.
    Running counts only grow, so "latest" is the maximum whatever order the exchange delivers.
    """

    columns = ("key", "value", KEY_GROUP, "arrival_ns", "seq")

    def process(self, cols, n, arrivals) -> None:
        keys, values, groups = cols["key"], cols["value"], cols[KEY_GROUP]
        arrived, seqs = cols["arrival_ns"], cols["seq"]
        get, put, emit = self.state.get, self.state.put, self.ctx.output.emit
        loads = PairSerializer.loads
        for i in range(n):
            key = keys[i]
            salt, running = loads(values[i])
            total, latest = get(groups[i], key) or (0, {})
            total += running  # the seed's ``total + partialSum``
            latest[salt] = max(latest.get(salt, 0), running)
            put(groups[i], key, (total, latest))
            emit(key, (total, sum(latest.values())), arrived[i], seqs[i])
