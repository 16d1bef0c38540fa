import type { ProbeEvent } from './events.js';

export interface ProbeState {
  exists: boolean;
  name: string | null;
  value: number;
  acknowledged: boolean;
}

export const initialProbeState: ProbeState = { exists: false, name: null, value: 0, acknowledged: false };

export function evolveProbe(state: ProbeState, event: ProbeEvent): ProbeState {
  switch (event.type) {
    case 'ProbeCreated':
      return { exists: true, name: event.data.name, value: 0, acknowledged: false };
    case 'ProbeIncremented':
      return { ...state, value: state.value + event.data.by };
    case 'ProbeAcknowledged':
      return { ...state, acknowledged: true };
    default:
      return state;
  }
}
