/**
 * Prefixes every topic and consumer group of a bus with a namespace
 * (BUS_NAMESPACE), so several deployments (staging and production, or test
 * runs) share one Kafka cluster without seeing each other's data. Handlers and
 * callers keep using the plain names; messages come back with the plain topic.
 */
import type {
  Bus,
  BusMessage,
  Consumer,
  ConsumerOptions,
  DeadLetterSummary,
  DeadLetterSummaryOptions,
  OutgoingMessage,
  PartitionOffsets,
  ReplayFrom,
} from './bus.js';

export function namespaced(bus: Bus, namespace: string): Bus {
  if (!namespace) return bus;
  const wrap = (name: string) => `${namespace}${name}`;
  const unwrap = (name: string) => (name.startsWith(namespace) ? name.slice(namespace.length) : name);
  // One string per topic, not one per message (a batch is thousands of messages of one topic).
  const plainTopics = new Map<string, string>();
  const plainTopic = (name: string) => {
    let t = plainTopics.get(name);
    if (t === undefined) plainTopics.set(name, (t = unwrap(name)));
    return t;
  };
  const plain = (m: BusMessage): BusMessage => new TopicView(plainTopic(m.topic), m);
  const wrapped = (m: BusMessage): BusMessage => new TopicView(wrap(m.topic), m);
  return {
    adapter: bus.adapter,
    ensureTopics: (topics: string[]) => bus.ensureTopics(topics.map(wrap)),
    publish: (topic: string, messages: OutgoingMessage[]) => bus.publish(wrap(topic), messages),
    consume: async (options: ConsumerOptions): Promise<Consumer> => {
      const consumer = await bus.consume({
        ...options,
        groupId: wrap(options.groupId),
        topics: options.topics.map(wrap),
        handleBatch: (messages, ctx) =>
          options.handleBatch(messages.map(plain), {
            ...ctx,
            deadLetter: (message, reason) => ctx.deadLetter(wrapped(message), reason),
          }),
      });
      return {
        get status() {
          const s = consumer.status;
          return { ...s, groupId: unwrap(s.groupId), topics: s.topics.map(unwrap) };
        },
        stop: () => consumer.stop(),
      };
    },
    resetOffsets: (groupId: string, topic: string, from: ReplayFrom) =>
      bus.resetOffsets(wrap(groupId), wrap(topic), from),
    committedOffsets: (groupId: string, topic: string): Promise<PartitionOffsets> =>
      bus.committedOffsets(wrap(groupId), wrap(topic)),
    endOffsets: (topic: string) => bus.endOffsets(wrap(topic)),
    deadLetterSummary: async (
      topics: string[],
      options?: DeadLetterSummaryOptions,
    ): Promise<Record<string, DeadLetterSummary>> => {
      const inner = await bus.deadLetterSummary(topics.map(wrap), options);
      return Object.fromEntries(
        topics.map((t) => {
          const s = inner[wrap(t)]!;
          return [
            t,
            s.last ? { ...s, last: { ...s.last, topic: unwrap(s.last.topic), group: unwrap(s.last.group) } } : s,
          ];
        }),
      );
    },
    readTopic: (topic: string, onMessage: (message: BusMessage) => void | Promise<void>) =>
      bus.readTopic(wrap(topic), (m) => onMessage(plain(m))),
    ping: () => bus.ping(),
    close: () => bus.close(),
  };
}

/**
 * A message under another topic name; every other field is read through
 * when asked for, not copied: the Kafka adapter decodes key, value and
 * headers on read, and a copy would decode a whole batch up front.
 */
class TopicView implements BusMessage {
  constructor(
    readonly topic: string,
    private readonly inner: BusMessage,
  ) {}

  get partition(): number {
    return this.inner.partition;
  }

  get offset(): string {
    return this.inner.offset;
  }

  get key(): string {
    return this.inner.key;
  }

  get value(): string {
    return this.inner.value;
  }

  get headers(): Record<string, string> {
    return this.inner.headers;
  }

  get timestamp(): number {
    return this.inner.timestamp;
  }
}
