import { useEffect, useId, useLayoutEffect, useRef, useState } from 'react';
import { createPortal } from 'react-dom';
import { pairingCodeFromScan } from './pairing-link';
import './QrScanner.css';

/** How often a frame is decoded: often enough to feel immediate, rarely enough to leave a phone's CPU mostly idle. */
const SCAN_MS = 200;
/** Frames are decoded at most this wide (or high): a pairing code fills much of the view, and jsQR's time grows with the pixels. */
const SCAN_EDGE = 640;

const CAMERA_REFUSED = 'Chyme may not use the camera. Allow the camera for this site in the browser’s settings, or type or paste the pairing code instead.';
const NO_CAMERA = 'This device has no camera Chyme can use. Type or paste the pairing code instead.';
const NOT_A_CHYME_CODE = 'That QR code is not a Chyme pairing code. Scan the one your computer shows under Integrations → Sync → “Add a phone”.';
const CAMERA_BUSY = 'The camera is in use by another app. Close it and try again, or type or paste the pairing code.';

/** What a failed getUserMedia means to the person, by the DOMException's name. */
function cameraProblem(err: unknown): string {
  const name = (err as { name?: string } | null)?.name;
  if (name === 'NotAllowedError' || name === 'SecurityError') return CAMERA_REFUSED;
  if (name === 'NotFoundError' || name === 'OverconstrainedError') return NO_CAMERA;
  if (name === 'NotReadableError' || name === 'AbortError') return CAMERA_BUSY;
  return `The camera did not start (${(err as Error)?.message ?? String(err)}). Type or paste the pairing code instead.`;
}

/**
 * "Scan QR code" on the phone's sync card: the rear camera's preview in a modal dialog, a frame
 * decoded with jsQR (loaded only now) every SCAN_MS; a Chyme pairing link or code is handed to
 * `onCode`, anything else is named and scanning goes on. Escape, Cancel, a found code or the page
 * going out of sight close it, and closing stops every track of the stream.
 */
export function QrScanner({ onCode, onClose }: { onCode: (code: string) => void; onClose: () => void }) {
  const dialogRef = useRef<HTMLDialogElement>(null);
  const videoRef = useRef<HTMLVideoElement>(null);
  const ids = useId();
  const [problem, setProblem] = useState<string | null>(null);
  const [notChyme, setNotChyme] = useState(false);
  const [live, setLive] = useState(false);
  // The newest callbacks, so that the camera's effect runs once for the dialog's life.
  const handlers = useRef({ onCode, onClose });
  handlers.current = { onCode, onClose };

  // A layout effect: its clean-up closes the dialog while it is still in the document, so the
  // browser returns focus to what opened it.
  useLayoutEffect(() => {
    const d = dialogRef.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);

  useEffect(() => {
    let stream: MediaStream | null = null;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = () => {
      stopped = true;
      clearTimeout(timer);
      stream?.getTracks().forEach((t) => t.stop());
      stream = null;
    };

    async function start(): Promise<void> {
      if (!navigator.mediaDevices?.getUserMedia) return setProblem(NO_CAMERA);
      // The decoder loads while the person answers the camera prompt.
      const decoder = import('jsqr');
      decoder.catch(() => undefined);
      try {
        stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'environment' }, audio: false });
      } catch (err) {
        return setProblem(cameraProblem(err));
      }
      if (stopped) return stop();
      const video = videoRef.current!;
      video.srcObject = stream;
      await video.play().catch(() => undefined);
      let jsQR: (typeof import('jsqr'))['default'];
      try {
        jsQR = (await decoder).default;
      } catch (err) {
        stop();
        return setProblem(`The QR code reader did not load (${(err as Error)?.message ?? String(err)}). Type or paste the pairing code instead.`);
      }
      if (stopped) return;
      setLive(true);
      const canvas = document.createElement('canvas');
      const ctx = canvas.getContext('2d', { willReadFrequently: true })!;
      const scan = () => {
        if (stopped) return;
        if (video.readyState >= video.HAVE_CURRENT_DATA && video.videoWidth > 0) {
          const scale = Math.min(1, SCAN_EDGE / Math.max(video.videoWidth, video.videoHeight));
          const w = Math.round(video.videoWidth * scale);
          const h = Math.round(video.videoHeight * scale);
          canvas.width = w;
          canvas.height = h;
          ctx.drawImage(video, 0, 0, w, h);
          const found = jsQR(ctx.getImageData(0, 0, w, h).data, w, h, { inversionAttempts: 'dontInvert' });
          if (found) {
            const code = pairingCodeFromScan(found.data);
            if (code !== null) {
              stop();
              handlers.current.onCode(code);
              return;
            }
            setNotChyme(true);
          }
        }
        timer = setTimeout(scan, SCAN_MS);
      };
      scan();
    }

    void start();
    // A page out of sight keeps no camera open: the dialog closes, and Scan opens it again.
    const onHidden = () => {
      if (document.visibilityState === 'hidden') handlers.current.onClose();
    };
    document.addEventListener('visibilitychange', onHidden);
    return () => {
      document.removeEventListener('visibilitychange', onHidden);
      stop();
    };
  }, []);

  const title = `${ids}-title`;
  const hint = `${ids}-hint`;
  return createPortal(
    <dialog
      ref={dialogRef}
      className="qr-scan"
      aria-labelledby={title}
      aria-describedby={hint}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
      data-testid="qr-scanner"
    >
      <h2 id={title}>Scan the pairing QR code</h2>
      <p id={hint} className="muted small">
        On your computer: Integrations → Sync → “Add a phone”. Hold this phone so the code fills most of the frame.
      </p>
      {problem ? (
        <p className="form-error" role="alert" data-testid="qr-problem">
          {problem}
        </p>
      ) : (
        <div className="qr-scan__view">
          <video ref={videoRef} className="qr-scan__video" muted playsInline aria-label="Camera preview" />
        </div>
      )}
      <p className="small" role="status" data-testid="qr-status">
        {problem ? '' : notChyme ? NOT_A_CHYME_CODE : live ? 'Looking for a QR code…' : 'Starting the camera…'}
      </p>
      <div className="form-actions">
        <button type="button" className="btn btn--ghost" onClick={onClose}>
          Cancel
        </button>
      </div>
    </dialog>,
    document.body,
  );
}
