import type { DigestiveStateName } from '../engine/types.js';

/**
 * How the digestive states read to a person, for every place that shows them (the desktop tray
 * and notifications; the renderer's dial may import it too: it has no runtime dependencies).
 */


export const STATE_LABEL: Record<DigestiveStateName, string> = {
  processing: 'Processing',
  settling: 'Settling',
  fasted: 'Fasted',
};

/** The state that follows each one when nothing more is eaten (fasted → processing needs a meal). */
export const NEXT_STATE: Record<DigestiveStateName, DigestiveStateName> = {
  processing: 'settling',
  settling: 'fasted',
  fasted: 'processing',
};

/** One sentence for the moment a state begins (desktop notifications). */
export const STATE_STARTED: Record<DigestiveStateName, string> = {
  processing: 'Digestion has started on your meal.',
  settling: 'Your stomach is nearly empty; digestion is settling.',
  fasted: 'Digestion has settled: you are in the fasted state.',
};
