// Bundles imported as text by esbuild (the layout worker's code).
declare module '*.txt' {
  const text: string;
  export default text;
}
