// The microphone as 16-bit little-endian mono PCM at a chosen rate: Web Audio resamples the capture
// to the context's rate, an AudioWorklet hands over its frames, and they are sent as they come.

// The worklet's code, loaded from a Blob: the page fetches nothing beyond its own bundle.
const WORKLET = `registerProcessor("pcm-tap", class extends AudioWorkletProcessor {
  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (channel) this.port.postMessage(channel.slice());
    return true;
  }
});`;

export interface Microphone {
  stop(): void;
}

export async function startMicrophone(sampleRate: number, onPcm: (pcm: ArrayBuffer) => void): Promise<Microphone> {
  const stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true } });
  const context = new AudioContext({ sampleRate });
  const url = URL.createObjectURL(new Blob([WORKLET], { type: "text/javascript" }));
  await context.audioWorklet.addModule(url);
  URL.revokeObjectURL(url);
  const tap = new AudioWorkletNode(context, "pcm-tap");
  // The worklet's frames are 128 samples; they go out 20 ms at a time.
  const frame = new Int16Array(sampleRate / 50);
  let filled = 0;
  tap.port.onmessage = (e: MessageEvent<Float32Array>) => {
    for (const v of e.data) {
      frame[filled++] = Math.max(-32768, Math.min(32767, Math.round(v * 32768)));
      if (filled === frame.length) {
        onPcm(frame.slice().buffer);
        filled = 0;
      }
    }
  };
  // Silent, but connected: the graph is pulled from its destination.
  const mute = context.createGain();
  mute.gain.value = 0;
  context.createMediaStreamSource(stream).connect(tap).connect(mute).connect(context.destination);
  return {
    stop() {
      tap.port.onmessage = null;
      for (const track of stream.getTracks()) track.stop();
      void context.close();
    },
  };
}
