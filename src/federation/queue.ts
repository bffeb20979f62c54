/** Fedify's MessageQueue as the Worker sees it: messages go to the `FederationQueue` Durable Object. */
import type { MessageQueue, MessageQueueDepth, MessageQueueEnqueueOptions } from "@fedify/fedify";
import type { FederationQueue } from "../objects/federation-queue";

/** The MessageQueue the Worker hands to Fedify: it stores messages in the `FederationQueue` object. */
export class DurableObjectMessageQueue implements MessageQueue {
  readonly nativeRetrial = true;
  constructor(private readonly ns: DurableObjectNamespace<FederationQueue>) {}

  /** One object for now; delivery per destination host (issue 13's outbox) will shard it. */
  private stub() {
    return this.ns.get(this.ns.idFromName("default"));
  }

  async enqueue(message: unknown, options?: MessageQueueEnqueueOptions): Promise<void> {
    await this.enqueueMany([message], options);
  }

  async enqueueMany(messages: readonly unknown[], options?: MessageQueueEnqueueOptions): Promise<void> {
    const delay = options?.delay ? options.delay.total({ unit: "millisecond" }) : 0;
    await this.stub().enqueue([...messages], delay, options?.orderingKey ?? null);
  }

  async getDepth(): Promise<MessageQueueDepth> {
    const { queued, ready, delayed } = await this.stub().depth();
    return { queued, ready, delayed };
  }

  listen(): Promise<void> {
    // Nothing listens in a Worker: the object's alarm drains the queue.
    return Promise.reject(new Error("the federation queue is drained by its alarm, not by listen()"));
  }
}
