import { render } from 'preact';
import { App } from './app.js';

const root = document.getElementById('console');
if (root === null) throw new Error('the page has no #console element');
root.replaceChildren();
render(<App />, root);
