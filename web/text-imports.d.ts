// Files the bundler inlines as text (`with { type: "text" }`).
declare module "*.md" {
  const text: string;
  export default text;
}
