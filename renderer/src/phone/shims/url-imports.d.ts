/** Vite's `?url` imports: the built file's URL (vite/client's declaration, which the renderer's project does not load). */
declare module '*?url' {
  const url: string;
  export default url;
}
