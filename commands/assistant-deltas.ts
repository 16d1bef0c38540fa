import type { AssistantCommand } from '../domain/assistant/index.js';
import type { WithoutAt } from './handle.js';

/**
 * The streamed text of a reply, recorded as AssistantTextDelta events so a client that drops can
 * resume from the log (Last-Event-ID). One append in flight at a time: deltas that arrive meanwhile
 * are coalesced into the next one (same iteration), so a fast model costs fewer, longer events,
 * never a lost one. `flush` waits until everything taken is in the log: called before a tool step
 * and before the reply's end, so the log keeps the order the client saw.
 */
export class DeltaRecorder {
  private queue: Array<{ iteration: number; text: string }> = [];
  private pumping: Promise<void> | null = null;
  private failed: unknown = null;

  constructor(
    private readonly replyId: string,
    private readonly record: (command: WithoutAt<AssistantCommand>) => Promise<unknown>,
  ) {}

  take(iteration: number, text: string): void {
    const last = this.queue[this.queue.length - 1];
    if (last && last.iteration === iteration) last.text += text;
    else this.queue.push({ iteration, text });
    this.pump();
  }

  async flush(): Promise<void> {
    while (this.pumping) await this.pumping;
    if (this.failed) throw this.failed;
  }

  private pump(): void {
    if (this.pumping) return;
    this.pumping = (async () => {
      try {
        while (this.queue.length > 0) {
          const batch = this.queue;
          this.queue = [];
          for (const d of batch) await this.record({ type: 'RecordTextDelta', replyId: this.replyId, iteration: d.iteration, text: d.text });
        }
      } catch (err) {
        this.failed = err;
        this.queue = [];
      } finally {
        this.pumping = null;
      }
    })();
  }
}
