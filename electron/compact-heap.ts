/** Imported first by main.ts so it runs before the service's modules allocate (see server/memory.ts). */
import { useCompactHeap } from '../server/memory.js';

useCompactHeap();
